"""A finished task's event waits for its whole result and arguments from the result backend
(a real Celery backend here, in memory), goes out with the event's own values when the
backend cannot answer, and nothing waits without end."""
import logging
import uuid

from celery import Celery
from celery.app.task import Context

from jobwatch_celery.backend_values import BackendValues
from jobwatch_celery.task_values import TaskValues


def app_with_backend(extended=True):
    app = Celery("backend-values-test", backend="cache+memory://", set_as_current=False)
    app.conf.result_extended = extended
    return app


def finished(task_id, name="app.export", state="completed", **job):
    return {"type": "job_state_change", "job": {"externalId": task_id, "name": name, "state": state, **job}}


def store(app, result, state="SUCCESS", name="app.export", args=(), kwargs=None):
    task_id = str(uuid.uuid4())
    request = Context(id=task_id, task=name, args=list(args), kwargs=kwargs or {}, hostname="w1", retries=0, delivery_info={"routing_key": "celery"})
    app.backend.store_result(task_id, result, state, request=request)
    return task_id


def test_a_finished_tasks_event_waits_for_its_whole_result_and_arguments_masked_and_others_go_at_once():
    app = app_with_backend()
    sent = []
    values = BackendValues(app, TaskValues(), sent.append)
    rows = [f"row {n}" for n in range(300)]  # far past what the event's repr (1,024 characters) holds
    task_id = store(app, {"rows": rows, "auth": {"token": "t"}}, args=[{"login": "ada", "password": "p"}], kwargs={"invoice_id": "INV-7"})
    queued = {"type": "job_state_change", "job": {"externalId": "other", "name": "x", "state": "queued"}}
    values.send([queued, finished(task_id, result="{'rows': ['row 0', ...]}")])
    assert sent == [[queued]]
    values.read_held()
    [[done]] = sent[1:]
    assert done["job"]["result"] == {"rows": rows, "auth": {"token": "[redacted]"}}
    assert done["job"]["args"] == {"args": [{"login": "ada", "password": "[redacted]"}], "kwargs": {"invoice_id": "INV-7"}}
    assert values.read == 1


def test_a_failed_task_takes_its_arguments_not_its_exception_and_omit_args_is_kept():
    app = app_with_backend()
    sent = []
    values = BackendValues(app, TaskValues(omit_args=["app.login"]), sent.append)
    failed_id = store(app, ValueError("boom"), state="FAILURE", args=[1, 2])
    login_id = store(app, "ok", name="app.login", args=["ada", "hunter2"])
    values.send([finished(failed_id, state="failed"), finished(login_id, name="app.login")])
    values.read_held()
    [[failed, login]] = sent
    assert failed["job"]["args"] == {"args": [1, 2], "kwargs": {}} and "result" not in failed["job"]
    assert login["job"]["result"] == "ok" and "args" not in login["job"]


def test_without_result_extended_only_the_result_is_read_and_an_unknown_task_keeps_the_events_values():
    app = app_with_backend(extended=False)
    sent = []
    values = BackendValues(app, TaskValues(), sent.append)
    task_id = store(app, [1, 2, 3], args=[5])
    values.send([finished(task_id, args={"args": [5], "kwargs": {}}), finished("never-stored", result=7)])
    values.read_held()
    [[done, unknown]] = sent
    assert done["job"]["result"] == [1, 2, 3] and done["job"]["args"] == {"args": [5], "kwargs": {}}
    assert unknown["job"]["result"] == 7 and values.sent_unread == 1


def test_a_backend_that_fails_lets_the_events_go_with_their_own_values_and_says_so_once(caplog):
    app = app_with_backend()
    sent = []
    values = BackendValues(app, TaskValues(), sent.append)

    def broken(keys):
        raise ConnectionError("backend down")

    app.backend.mget = broken
    with caplog.at_level(logging.WARNING):
        for n in range(2):
            values.send([finished(f"t{n}", result=n)])
            values.read_held()
    assert [batch[0]["job"]["result"] for batch in sent] == [0, 1]
    assert sum("could not read 1 finished tasks from the result backend (ConnectionError: backend down)" in line for line in caplog.messages) == 1


def test_nothing_is_held_without_a_backend_or_past_the_bound():
    sent = []
    BackendValues(Celery("no-backend", set_as_current=False), TaskValues(), sent.append).send([finished("a")])
    assert len(sent) == 1
    sent.clear()
    values = BackendValues(app_with_backend(), TaskValues(), sent.append, held_max=2)
    values.send([finished("a"), finished("b"), finished("c")])
    assert sent == [[finished("c")]]  # the third goes out at once, with what its event carried
