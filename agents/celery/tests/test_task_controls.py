"""A task's rate limit: only on the workers that registered the task, each confirming it."""
from fake_remote import FakeRemote, FakeWorker
from jobwatch_celery.task_controls import TaskControls, registered_by


def command(name="app.send_mail", rate="10/m"):
    return {"id": "c1", "type": "task.rate_limit", "name": name, "queue": None, "params": {"rate": rate}}


def test_the_rate_limit_goes_to_the_workers_that_have_the_task():
    remote = FakeRemote(a=FakeWorker(registered=["app.send_mail", "app.other"]), b=FakeWorker(registered=["app.other"]))
    outcome = TaskControls(remote).rate_limit("c1", command())
    assert (outcome.status, outcome.details) == ("done", {"workers": 1})
    assert remote.sent == [("rate_limit", {"task_name": "app.send_mail", "rate_limit": "10/m"}, ["a@host"])]


def test_null_clears_the_rate_limit():
    remote = FakeRemote(a=FakeWorker(registered=["app.send_mail"]))
    outcome = TaskControls(remote).rate_limit("c1", command(rate=None))
    assert outcome.status == "done" and "cleared" in outcome.reason
    assert remote.sent[0][1] == {"task_name": "app.send_mail", "rate_limit": None}


def test_a_task_no_worker_has_is_not_found():
    remote = FakeRemote(a=FakeWorker(registered=["app.other"]))
    outcome = TaskControls(remote).rate_limit("c1", command())
    assert outcome.status == "failed" and outcome.reason == "not found: no worker answering on this broker has task 'app.send_mail' registered"
    assert remote.sent == []


def test_a_rate_a_worker_refused_or_did_not_confirm_is_failed():
    remote = FakeRemote(a=FakeWorker(registered=["app.send_mail"], refuses={"rate_limit": "unknown task"}), b=FakeWorker(registered=["app.send_mail"]))
    outcome = TaskControls(remote).rate_limit("c1", command())
    assert outcome.status == "failed" and "a@host refused: unknown task" in outcome.reason and outcome.details == {"workers": 1}


def test_a_bad_or_missing_rate_never_reaches_a_worker():
    remote = FakeRemote(a=FakeWorker(registered=["app.send_mail"]))
    for params in ({"rate": "10/fortnight"}, {"rate": 10}, {"rate": "0/m"}, {}, None, "10/m"):
        outcome = TaskControls(remote).rate_limit("c1", {"id": "c1", "name": "app.send_mail", "params": params})
        assert outcome.status == "failed", params
    assert remote.sent == [] and remote.asked == []


def test_registered_by_reads_names_with_or_without_their_rate_limit():
    answers = {"a@host": ["app.send_mail [rate_limit=1/s]"], "b@host": ["app.send_mail_later"], "c@host": None}
    assert registered_by(answers, "app.send_mail") == ["a@host"]
