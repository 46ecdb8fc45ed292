"""Asking Celery for the names of tasks the agent joined midway."""
from types import SimpleNamespace

from celery import Celery
from kombu.exceptions import OperationalError

from jobwatch_celery.task_names import lookup_names


class FakeInspect:
    def __init__(self, replies):
        self.replies = replies
        self.asked = None

    def query_task(self, *ids):
        self.asked = ids
        if isinstance(self.replies, Exception):
            raise self.replies
        return self.replies


def fake_app(metas, replies):
    inspect = FakeInspect(replies)
    backend = SimpleNamespace(get_task_meta=lambda task_id: metas.get(task_id, {"status": "PENDING"}))
    return SimpleNamespace(backend=backend, control=SimpleNamespace(inspect=lambda timeout: inspect)), inspect


def test_the_result_backend_first_then_the_workers_for_the_rest():
    replies = {"w1@host": {"b": ["active", {"id": "b", "name": "app.running", "type": "app.running"}]}}
    app, inspect = fake_app({"a": {"status": "SUCCESS", "name": "app.done"}}, replies)
    assert lookup_names(app, ["a", "b", "c"]) == {"a": "app.done", "b": "app.running"}
    assert inspect.asked == ("b", "c")


def test_without_a_result_backend_only_the_workers_are_asked():
    app, inspect = fake_app({}, {"w1@host": {"a": ["reserved", {"type": "app.queued"}]}})
    app.backend = Celery(set_as_current=False).backend
    assert lookup_names(app, ["a"]) == {"a": "app.queued"}


def test_an_unreachable_broker_gives_no_names_and_a_log_line(caplog):
    app, _ = fake_app({}, OperationalError("broker down"))
    assert lookup_names(app, ["a"]) == {}
    assert "could not ask Celery for 1 task names" in caplog.text
