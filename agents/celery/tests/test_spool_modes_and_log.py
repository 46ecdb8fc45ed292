"""What the agent leaves on disk and in its log: the spool holds the app's task names, errors and
tracebacks, so it is the agent's alone (0700, 0600, an older spool tightened at start); log lines
carry names from Celery and jobwatch, so their control characters are escaped."""
import io
import logging
import os
import stat

from jobwatch_celery.log_lines import LINE_FORMAT, OneLineFormatter, printable
from jobwatch_celery.private_files import tighten_private_tree
from jobwatch_celery.spool import Spool


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def under_open_umask(work):
    before = os.umask(0)
    try:
        return work()
    finally:
        os.umask(before)


def test_the_spool_directory_is_0700_and_its_batch_files_0600_whatever_the_umask(tmp_path):
    directory = str(tmp_path / "agent" / "spool")
    spool = under_open_umask(lambda: Spool(directory, 1024 * 1024))
    under_open_umask(lambda: spool.append(['{"job":{"name":"send_invoice","error":"card declined"}}']))
    [name] = os.listdir(directory)
    assert (mode_of(directory), mode_of(os.path.dirname(directory)), mode_of(os.path.join(directory, name))) == (0o700, 0o700, 0o600)


def test_a_leftover_temporary_file_of_another_mode_is_written_0600(tmp_path):
    directory = str(tmp_path / "spool")
    spool = Spool(directory, 1024 * 1024)
    leftover = os.path.join(directory, "000000000001-1.json.tmp")
    with open(leftover, "w") as file:
        file.write("{}")
    os.chmod(leftover, 0o666)
    spool.append(["{}"])
    assert mode_of(os.path.join(directory, "000000000001-1.json")) == 0o600


def test_a_spool_an_older_version_wrote_is_tightened_and_the_log_says_what_changed(tmp_path):
    root = str(tmp_path / "spool")
    os.makedirs(os.path.join(root, "old"))
    batch = os.path.join(root, "000000000001-1.json")
    with open(batch, "w") as file:
        file.write("[]")
    os.chmod(root, 0o755)
    os.chmod(os.path.join(root, "old"), 0o775)
    os.chmod(batch, 0o644)
    [line] = tighten_private_tree(root)
    assert (mode_of(root), mode_of(os.path.join(root, "old")), mode_of(batch)) == (0o700, 0o700, 0o600)
    assert f"removed group/other access from 3 path(s) under {root}" in line
    assert ". 0755 -> 0700" in line and "000000000001-1.json 0644 -> 0600" in line
    assert tighten_private_tree(root) == []


def test_a_shared_sticky_directory_is_left_open_and_the_log_says_so(tmp_path):
    root = str(tmp_path / "shared")
    os.makedirs(root)
    os.chmod(root, 0o1777)
    lines = tighten_private_tree(root)
    assert mode_of(root) == 0o1777
    assert "is a shared directory (mode 01777): its own mode is left as it is; give the agent a directory of its own" in "\n".join(lines)


def test_control_characters_in_a_log_line_are_escaped_so_no_name_forges_a_line():
    forged = "celery\n2026-11-20 10:00:00,000 ERROR jobwatch_celery.deliver: dropped 1000 events\r\x00\x1b[31m\u2028"
    assert printable(forged) == "celery\\n2026-11-20 10:00:00,000 ERROR jobwatch_celery.deliver: dropped 1000 events\\r\\x00\\x1b[31m\\u2028"
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter(LINE_FORMAT))
    logger = logging.getLogger("jobwatch_celery.test_log_lines")
    logger.addHandler(handler)
    try:
        logger.error("queue %s: unreachable", forged)
        try:
            raise ValueError("a traceback's\nlines")
        except ValueError:
            logger.exception("flush failed")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("queue celery\\n2026-11-20 10:00:00,000 ERROR jobwatch_celery.deliver: dropped 1000 events\\r\\x00\\x1b[31m\\u2028: unreachable")
    assert "Traceback (most recent call last):\\n" in lines[1] and "ValueError: a traceback's\\nlines" in lines[1]
