"""Delete: a waiting task is revoked once Celery is seen to hold it; a finished one's result is forgotten; else not found."""
import pytest

from fake_remote import FakeRemote, FakeWorker
from jobwatch_celery import job_commands
from jobwatch_celery.job_commands import JobCommands


class Backend:
    def __init__(self, metas=None, forgets=True):
        self.metas = dict(metas or {})
        self.forgets = forgets
        self.forgotten = []

    def get_task_meta(self, task_id):
        return self.metas.get(task_id, {"status": "PENDING", "result": None})

    def forget(self, task_id):
        if not self.forgets:
            raise NotImplementedError("backend does not implement forget.")
        self.forgotten.append(task_id)
        self.metas.pop(task_id, None)


class App:
    def __init__(self, backend):
        self.backend = backend


@pytest.fixture
def queue_holds(monkeypatch):
    """Which task ids wait in which queue on the broker (None: the agent cannot tell)."""
    holds = {}
    monkeypatch.setattr(job_commands, "waits_in_queue", lambda app, queue, task_id: holds.get((queue, task_id), False))
    return holds


def delete(remote, task_id, backend=None, reported=None, queue=None):
    reported = reported or {}
    jobs = JobCommands(App(backend or Backend()), remote, "SIGTERM", reported.get, lambda: {"celery", "mail"})
    return jobs.delete("c1", {"id": "c1", "type": "delete", "externalId": task_id, "queue": queue})


def revokes(remote):
    return [(args, hosts) for name, args, hosts in remote.sent if name == "revoke"]


def test_a_task_waiting_in_its_queue_is_revoked_without_terminating_on_every_worker(queue_holds):
    remote = FakeRemote(a=FakeWorker(["celery"]), b=FakeWorker(["mail"]))
    queue_holds[("mail", "t1")] = True
    outcome = delete(remote, "t1", reported={"t1": {"queue": "mail", "state": "queued"}})
    assert (outcome.status, outcome.details) == ("done", {"workers": 2})
    assert revokes(remote) == [({"task_id": "t1", "terminate": False, "signal": None}, ["a@host", "b@host"])]


def test_a_task_in_a_workers_timer_or_reserved_is_revoked_though_the_agent_never_reported_it(queue_holds):
    remote = FakeRemote(a=FakeWorker(scheduled=["eta-task"]), b=FakeWorker(holds={"prefetched": "reserved"}))
    assert delete(remote, "eta-task").status == "done"
    assert delete(remote, "prefetched").status == "done"
    assert len(revokes(remote)) == 2


def test_a_running_task_is_not_deleted():
    remote = FakeRemote(a=FakeWorker(holds={"t1": "active"}))
    outcome = delete(remote, "t1", reported={"t1": {"queue": "celery", "state": "active"}})
    assert outcome.status == "failed" and "running" in outcome.reason and revokes(remote) == []


def test_a_reported_task_its_queue_no_longer_holds_is_not_found(queue_holds):
    remote = FakeRemote(a=FakeWorker(["mail"]))
    outcome = delete(remote, "purged", reported={"purged": {"queue": "mail", "state": "queued"}})
    assert outcome.status == "failed" and outcome.reason.startswith("not found: Celery has no such task waiting")
    assert revokes(remote) == []


def test_a_task_id_nobody_knows_is_not_found_even_when_the_queue_is_too_long_to_read(queue_holds):
    remote = FakeRemote(a=FakeWorker(["mail"]))
    queue_holds[("mail", "forged")] = None
    outcome = delete(remote, "forged", queue="mail")
    assert outcome.status == "failed" and outcome.reason.startswith("not found:") and revokes(remote) == []


def test_a_reported_task_is_revoked_when_the_broker_cannot_say_whether_it_waits(queue_holds):
    remote = FakeRemote(a=FakeWorker(["mail"]))
    queue_holds[("mail", "t1")] = None  # not Redis, or a queue longer than the agent reads
    assert delete(remote, "t1", reported={"t1": {"queue": "mail", "state": "queued"}}).status == "done"


def test_a_finished_task_has_its_result_forgotten_and_nothing_revoked():
    backend = Backend({"t1": {"status": "FAILURE", "name": "app.add"}})
    remote = FakeRemote(a=FakeWorker(["celery"]))
    outcome = delete(remote, "t1", backend=backend)
    assert (outcome.status, outcome.details) == ("done", {"forgotten": True})
    assert backend.forgotten == ["t1"] and revokes(remote) == [] and remote.asked == []


def test_a_finished_task_whose_backend_cannot_forget_is_failed():
    backend = Backend({"t1": {"status": "SUCCESS", "name": "app.add"}}, forgets=False)
    outcome = delete(FakeRemote(), "t1", backend=backend)
    assert outcome.status == "failed" and "cannot forget" in outcome.reason


def test_a_finished_task_celery_kept_nothing_of_is_not_found(queue_holds):
    remote = FakeRemote(a=FakeWorker(["celery"]))
    outcome = delete(remote, "t1", reported={"t1": {"queue": "celery", "state": "completed"}})
    assert outcome.status == "failed" and outcome.reason.startswith("not found: the task has finished")


def test_with_no_worker_answering_nothing_is_revoked_and_the_outcome_says_so(queue_holds):
    remote = FakeRemote(a=FakeWorker(["mail"], answers=False))
    queue_holds[("mail", "t1")] = True
    outcome = delete(remote, "t1", reported={"t1": {"queue": "mail", "state": "queued"}})
    assert outcome.status == "failed" and "no worker answered" in outcome.reason and revokes(remote) == []


def test_a_revoke_a_worker_did_not_confirm_is_failed(queue_holds):
    remote = FakeRemote(a=FakeWorker(["mail"], refuses={"revoke": "RuntimeError('full')"}))
    queue_holds[("mail", "t1")] = True
    outcome = delete(remote, "t1", reported={"t1": {"queue": "mail", "state": "queued"}})
    assert outcome.status == "failed" and "revoke not confirmed: a@host refused" in outcome.reason


def test_a_finished_task_without_a_result_backend_says_what_the_agent_lacks(queue_holds):
    from celery import Celery

    class NoBackendApp:
        backend = Celery(set_as_current=False).backend  # no result backend configured

    jobs = JobCommands(NoBackendApp(), FakeRemote(a=FakeWorker(["celery"])), "SIGTERM", {"t1": {"queue": "celery", "state": "failed"}}.get, lambda: {"celery"})
    outcome = jobs.delete("c1", {"id": "c1", "type": "delete", "externalId": "t1", "queue": "celery"})
    assert outcome.status == "failed" and "--result-backend" in outcome.reason
