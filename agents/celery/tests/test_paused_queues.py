"""The record of paused queues: kept across a restart of the agent, private, and never lost to a bad file."""
import json
import os
import stat

from jobwatch_celery.paused_queues import PAUSED_FILE, PausedQueues
from jobwatch_celery.spool import Spool

BINDING = {"exchange": "mail", "exchange_type": "direct", "routing_key": "mail"}


def test_a_pause_is_kept_across_a_restart_with_its_workers(tmp_path):
    PausedQueues(str(tmp_path), clock=lambda: 5.0).pause("mail", {"a@host": BINDING})
    again = PausedQueues(str(tmp_path))
    assert again.names() == ["mail"] and again.consumers("mail") == {"a@host": BINDING} and again.paused_at("mail") == 5.0
    assert again.resume("mail") is not None
    assert PausedQueues(str(tmp_path)).names() == []


def test_the_record_is_the_agents_alone_and_no_spool_batch(tmp_path):
    PausedQueues(str(tmp_path)).pause("mail", {})
    assert stat.S_IMODE(os.stat(tmp_path / PAUSED_FILE).st_mode) == 0o600
    spool = Spool(str(tmp_path), 1024 * 1024)
    assert spool.events == 0 and (tmp_path / PAUSED_FILE).exists()  # the spool neither sends nor removes it


def test_an_unreadable_record_is_kept_aside_and_logged(tmp_path, caplog):
    (tmp_path / PAUSED_FILE).write_text("{not json")
    paused = PausedQueues(str(tmp_path), clock=lambda: 7.0)
    assert paused.names() == []
    assert (tmp_path / f"{PAUSED_FILE}.unreadable-7").read_text() == "{not json"
    assert "cannot read" in caplog.text and "starting with no queue paused" in caplog.text


def test_a_failed_resume_puts_the_pause_back_as_it_was(tmp_path):
    paused = PausedQueues(str(tmp_path))
    paused.pause("mail", {"a@host": BINDING})
    entry = paused.resume("mail")
    paused.restore("mail", entry)
    assert json.loads((tmp_path / PAUSED_FILE).read_text())["queues"]["mail"]["consumers"] == {"a@host": BINDING}


def test_a_second_pause_adds_the_workers_that_consume_the_queue_since(tmp_path):
    paused = PausedQueues(None)
    paused.pause("mail", {"a@host": BINDING})
    paused.pause("mail", {"b@host": BINDING})
    assert sorted(paused.consumers("mail")) == ["a@host", "b@host"]
