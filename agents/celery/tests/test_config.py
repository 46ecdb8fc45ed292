"""Flags and environment; a bad value stops start-up with a message naming the setting."""
import subprocess
import sys
import os

import pytest

from jobwatch_celery.config import ConfigError, load_config

GOOD = ["--broker", "redis://localhost:6379/0", "--url", "http://localhost:3000/", "--api-key", "sk_abc"]


def test_flags_win_over_the_environment_and_defaults_fill_the_rest():
    config = load_config(GOOD + ["--batch-size", "500"], {"JOBWATCH_BATCH_SIZE": "7", "JOBWATCH_SPOOL_DIR": "/var/spool/jw"})
    assert config.batch_size == 500 and config.spool_dir == "/var/spool/jw"
    assert config.url == "http://localhost:3000" and config.flush_interval_s == 0.25 and config.connection_id is None
    assert config.revoke_signal == "SIGTERM" and config.queues == ()
    assert load_config(GOOD + ["--queues", "mail, reports,,"], {}).queues == ("mail", "reports")


def test_redact_keys_replace_the_default_patterns_and_omit_args_add_up_however_given():
    config = load_config(GOOD, {})
    assert config.redact_keys == ("password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "credit_card", "card_number", "ssn")
    assert config.omit_args == ()
    assert load_config(GOOD + ["--redact-keys", "pin, iban"], {}).redact_keys == ("pin", "iban")
    assert load_config(GOOD, {"JOBWATCH_REDACT_KEYS": "None"}).redact_keys == ()
    given = load_config(GOOD + ["--omit-args", "app.login", "app.reset", "--omit-args", "billing.*,refunds.*"], {"JOBWATCH_OMIT_ARGS": "ignored"})
    assert given.omit_args == ("app.login", "app.reset", "billing.*", "refunds.*")
    assert load_config(GOOD, {"JOBWATCH_OMIT_ARGS": "app.login,app.reset"}).omit_args == ("app.login", "app.reset")


def test_everything_can_come_from_the_environment():
    env = {"CELERY_BROKER_URL": "amqp://guest@rabbit//", "JOBWATCH_URL": "https://jw.example", "JOBWATCH_API_KEY": "sk_x", "JOBWATCH_REVOKE_SIGNAL": "kill"}
    config = load_config([], env)
    assert config.broker == "amqp://guest@rabbit//" and config.api_key == "sk_x" and config.revoke_signal == "SIGKILL"


@pytest.mark.parametrize(
    "argv, named",
    [
        (GOOD[2:], "--broker"),
        (["--broker", "localhost"] + GOOD[2:], "--broker"),
        (GOOD[:2] + GOOD[4:], "--url"),
        (GOOD[:2] + ["--url", "ftp://x"] + GOOD[4:], "--url"),
        (GOOD[:4], "--api-key"),
        (GOOD[:4] + ["--api-key", "abc"], "--api-key"),
        (GOOD + ["--batch-size", "1001"], "--batch-size"),
        (GOOD + ["--batch-size", "ten"], "--batch-size"),
        (GOOD + ["--flush-interval", "1"], "--flush-interval"),
        (GOOD + ["--spool-max-mb", "0"], "--spool-max-mb"),
        (GOOD + ["--queue-interval", "0"], "--queue-interval"),
        (GOOD + ["--revoke-signal", "SIGNOPE"], "--revoke-signal"),
        (GOOD + ["--log-level", "loud"], "--log-level"),
        (GOOD + ["--queues", "a," + "q" * 256], "--queues"),
        (GOOD + ["--redact-keys", "pass word"], "--redact-keys"),
        (GOOD + ["--redact-keys", ","], "--redact-keys"),
        (GOOD + ["--omit-args", "t" * 1025], "--omit-args"),
    ],
)
def test_a_bad_value_names_the_setting(argv, named):
    with pytest.raises(ConfigError) as error:
        load_config(argv, {})
    assert str(error.value).startswith(named)


def test_the_command_explains_every_flag_and_exits_2_on_a_bad_value():
    env = {**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "src")}
    for key in ("CELERY_BROKER_URL", "JOBWATCH_URL", "JOBWATCH_API_KEY"):
        env.pop(key, None)
    shown = subprocess.run([sys.executable, "-m", "jobwatch_celery", "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    for flag in ("--broker", "--url", "--api-key", "--connection-id", "--result-backend", "--batch-size", "--flush-interval", "--spool-dir", "--spool-max-mb", "--queue-interval", "--command-interval", "--revoke-signal", "--queues"):
        assert flag in shown.stdout
    refused = subprocess.run([sys.executable, "-m", "jobwatch_celery", *GOOD, "--batch-size", "0"], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip() == "jobwatch-celery: --batch-size: 0 is outside 1..1000"


def test_an_unusable_spool_directory_stops_start_up_naming_the_flag(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = {**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "src")}
    # --connection-id skips asking jobwatch, so the spool is the first thing the agent touches
    argv = [*GOOD, "--connection-id", "c1", "--spool-dir", str(blocker / "spool")]
    refused = subprocess.run([sys.executable, "-m", "jobwatch_celery", *argv], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.startswith("jobwatch-celery: --spool-dir: cannot use")
