"""Celery's replies read as confirmations: only an `ok` from a worker the command was sent to counts."""
from types import SimpleNamespace

import pytest
from kombu.exceptions import OperationalError

from jobwatch_celery.remote_control import BrokerUnavailable, RemoteControl


def app_answering(answers, calls=None, down=False):
    """An app whose `control.broadcast` answers `answers` (Celery's list of {host: reply})."""
    calls = calls if calls is not None else []

    def broadcast(name, **options):
        calls.append((name, options))
        if down:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return answers

    return SimpleNamespace(control=SimpleNamespace(broadcast=broadcast))


def test_ok_error_and_silence_are_told_apart_per_worker():
    answers = [{"a@h": {"ok": "no longer consuming from mail"}}, {"b@h": {"error": "unknown task"}}, {"c@h": "pong?"}]
    replies = RemoteControl(app_answering(answers)).command("cancel_consumer", {"queue": "mail"}, ["a@h", "b@h", "c@h", "d@h"])
    assert replies.ok == {"a@h": "no longer consuming from mail"}
    assert replies.errors == {"b@h": "unknown task", "c@h": "pong?"}
    assert replies.silent == ["d@h"] and not replies.all_ok
    assert replies.problem() == "b@h refused: unknown task; c@h refused: pong?; no answer within 5s from d@h"


def test_a_reply_from_a_worker_the_command_was_not_sent_to_confirms_nothing():
    replies = RemoteControl(app_answering([{"other@h": {"ok": "pool will grow"}}])).command("pool_grow", {"n": 1}, ["a@h"])
    assert replies.ok == {} and replies.silent == ["a@h"]


def test_the_command_names_its_workers_and_waits_only_for_them():
    calls = []
    RemoteControl(app_answering([], calls), reply_timeout_s=3.0).command("rate_limit", {"task_name": "t", "rate_limit": "1/s"}, ["a@h", "b@h", "a@h"])
    assert calls == [("rate_limit", {"arguments": {"task_name": "t", "rate_limit": "1/s"}, "destination": ["a@h", "b@h"], "reply": True, "timeout": 3.0, "limit": 2})]


def test_a_broker_that_cannot_be_reached_is_told_apart_from_a_refusal():
    with pytest.raises(BrokerUnavailable):
        RemoteControl(app_answering([], down=True)).command("cancel_consumer", {"queue": "mail"}, ["a@h"])
    with pytest.raises(BrokerUnavailable):
        RemoteControl(app_answering([], down=True)).send("shutdown", ["a@h"])
