"""Queue commands: what counts as confirmed, what stays paused, what a resume gives back."""
import pytest

from fake_remote import FakeRemote, FakeWorker, declared
from jobwatch_celery.paused_queues import PausedQueues
from jobwatch_celery.queue_controls import QueueControls, consumers_of


def controls(remote, paused=None, watched=("celery", "mail")):
    """Queue controls whose pauses are recorded at time 100."""
    return QueueControls(app=None, remote=remote, paused=paused or PausedQueues(None, clock=lambda: 100.0), watched_queues=lambda: set(watched))


def command(queue, params=None):
    return {"id": "c1", "type": "queue.pause", "queue": queue, "params": params}


def test_pause_cancels_the_consumer_on_every_worker_of_that_queue_only():
    remote = FakeRemote(a=FakeWorker(["celery", "mail"]), b=FakeWorker(["mail"]), c=FakeWorker(["celery"]))
    queues = controls(remote)
    outcome = queues.pause("c1", command("mail"))
    assert (outcome.status, outcome.details) == ("done", {"workers": 2})
    assert remote.sent == [("cancel_consumer", {"queue": "mail"}, ["a@host", "b@host"])]
    assert [q["name"] for q in remote.workers["a@host"].queues] == ["celery"]
    assert queues.paused.is_paused("mail") and not queues.paused.is_paused("celery")


def test_a_pause_a_worker_did_not_answer_is_failed_but_the_queue_stays_paused_for_it():
    remote = FakeRemote(a=FakeWorker(["mail"]), b=FakeWorker(["mail"]))
    queues = controls(remote)
    remote.workers["b@host"].answers = False  # it answered the survey, then went silent
    remote.ask = _survey_then(remote.ask, {"b@host": [declared("mail")]})
    outcome = queues.pause("c1", command("mail"))
    assert outcome.status == "failed" and "no answer within 5s from b@host" in outcome.reason
    assert outcome.details == {"workers": 1}
    assert queues.paused.is_paused("mail") and set(queues.paused.consumers("mail")) == {"a@host", "b@host"}


def _survey_then(ask, extra):
    def asking(method, hosts=None, *args):
        answer = ask(method, hosts, *args)
        return {**answer, **extra} if method == "active_queues" else answer

    return asking


def test_resume_gives_each_worker_its_consumer_back_as_it_was_bound():
    remote = FakeRemote(a=FakeWorker([declared("mail", exchange="tasks", routing_key="mail.#")]), b=FakeWorker(["mail"]))
    queues = controls(remote)
    assert queues.pause("c1", command("mail")).status == "done"
    outcome = queues.resume("c2", command("mail"))
    assert (outcome.status, outcome.details) == ("done", {"workers": 2})
    adds = sorted((hosts, args["exchange"], args["routing_key"]) for name, args, hosts in remote.sent if name == "add_consumer")
    assert adds == [(["a@host"], "tasks", "mail.#"), (["b@host"], "mail", "mail")]
    assert not queues.paused.is_paused("mail")


def test_a_resume_no_worker_took_is_failed_and_the_queue_stays_paused():
    remote = FakeRemote(a=FakeWorker(["mail"]))
    queues = controls(remote)
    queues.pause("c1", command("mail"))
    remote.workers["a@host"].answers = False
    outcome = queues.resume("c2", command("mail"))
    assert outcome.status == "failed" and "stays paused" in outcome.reason
    assert queues.paused.is_paused("mail") and list(queues.paused.consumers("mail")) == ["a@host"]


def test_a_queue_nobody_consumes_is_paused_for_the_workers_that_come():
    remote = FakeRemote(a=FakeWorker(["celery"]))
    queues = controls(remote)
    outcome = queues.pause("c1", command("mail"))
    assert outcome.status == "done" and outcome.details == {"workers": 0} and remote.sent == []
    remote.workers["a@host"].queues.append(declared("mail"))  # a worker restarted with -Q celery,mail
    queues.keep_paused(remote.ask("active_queues"), asked_at=101.0)
    assert remote.sent == [("cancel_consumer", {"queue": "mail"}, ["a@host"])]
    assert list(queues.paused.consumers("mail")) == ["a@host"]  # it gets the queue back on resume


def test_a_survey_from_before_the_pause_cancels_nothing():
    remote = FakeRemote(a=FakeWorker(["mail"]))
    queues = controls(remote)
    before = remote.ask("active_queues")
    queues.pause("c1", command("mail"))
    remote.sent.clear()
    queues.keep_paused(before, asked_at=99.0)
    assert remote.sent == []


@pytest.mark.parametrize("kind", ["pause", "resume", "clean"])
def test_a_queue_the_agent_does_not_know_is_not_found_and_celery_is_not_asked(kind):
    remote = FakeRemote(a=FakeWorker(["celery"]))
    outcome = getattr(controls(remote), kind)("c1", command("elsewhere", {"mode": "waiting"}))
    assert outcome.status == "failed" and outcome.reason.startswith("not found: no worker consumes queue 'elsewhere'")
    assert remote.sent == [] and remote.asked == []


def test_resume_of_a_queue_that_is_not_paused_did_nothing_and_says_so():
    remote = FakeRemote(a=FakeWorker(["mail"]))
    outcome = controls(remote).resume("c1", command("mail"))
    assert outcome.status == "failed" and "not paused" in outcome.reason and remote.sent == []


def test_clean_of_finished_tasks_is_unsupported_and_a_bad_mode_is_refused():
    remote = FakeRemote()
    queues = controls(remote)
    finished = queues.clean("c1", command("mail", {"mode": "finished", "olderThanMs": 3600000, "states": ["completed"]}))
    assert finished.status == "unsupported" and "result backend" in finished.reason
    for params in ({"mode": "everything"}, None, "waiting"):
        refused = queues.clean("c1", {"id": "c1", "queue": "mail", "params": params})
        assert refused.status == "failed" and "params.mode" in refused.reason


def test_consumers_of_reads_how_each_worker_binds_the_queue():
    active = {"a@host": [declared("mail", exchange="tasks", routing_key="m")], "b@host": [declared("celery")], "c@host": "garbage"}
    assert consumers_of(active, "mail") == {"a@host": {"exchange": "tasks", "exchange_type": "direct", "routing_key": "m"}}
