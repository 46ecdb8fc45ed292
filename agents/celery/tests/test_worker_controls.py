"""Worker commands: confirmed by the worker, a worker nobody saw is not found, the pool kept in bounds."""
import pytest

from fake_remote import FakeRemote, FakeWorker
from jobwatch_celery.worker_controls import WorkerControls
from jobwatch_celery.worker_pool import pool_size


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def controls(remote, known=("a@host",), offline=None):
    clock = Clock()
    changed = []
    workers = WorkerControls(remote, known_workers=lambda: set(known), offline_since=lambda host: (offline or {}).get(host),
                             workers_changed=lambda: changed.append(True), clock=clock, sleep=clock.sleep)
    workers.changed = changed
    return workers


def command(host="a@host", params=None):
    return {"id": "c1", "type": "worker.quiet", "workerId": host, "hostname": host, "pid": 42, "params": params}


def test_quiet_cancels_every_queue_the_worker_consumes_and_nothing_of_other_workers():
    remote = FakeRemote(a=FakeWorker(["celery", "mail"]), b=FakeWorker(["celery"]))
    workers = controls(remote)
    outcome = workers.quiet("c1", command())
    assert (outcome.status, outcome.details) == ("done", {"queues": 2})
    assert remote.sent == [("cancel_consumer", {"queue": "celery"}, ["a@host"]), ("cancel_consumer", {"queue": "mail"}, ["a@host"])]
    assert [q["name"] for q in remote.workers["b@host"].queues] == ["celery"]
    assert workers.changed  # jobwatch is told the worker's queues again


def test_quiet_that_a_worker_refused_for_one_queue_is_failed_with_its_words():
    remote = FakeRemote(a=FakeWorker(["celery"], refuses={"cancel_consumer": "KeyError('celery')"}))
    outcome = controls(remote).quiet("c1", command())
    assert outcome.status == "failed" and "a@host refused: KeyError('celery')" in outcome.reason


def test_stop_is_done_when_the_worker_says_it_went_offline():
    remote = FakeRemote(a=FakeWorker(["celery"]))
    remote.send = lambda name, hosts: remote.sent.append((name, hosts))  # it keeps answering pings
    outcome = controls(remote, offline={"a@host": 1000.0}).stop("c1", command())
    assert outcome.status == "done" and "worker-offline" in outcome.reason
    assert remote.sent == [("shutdown", ["a@host"])]


def test_stop_is_done_when_the_worker_stops_answering():
    remote = FakeRemote(a=FakeWorker(["celery"]))
    outcome = controls(remote).stop("c1", command())
    assert outcome.status == "done" and "stopped answering" in outcome.reason and remote.workers["a@host"].stopped


def test_stop_a_worker_did_not_take_is_failed_after_the_wait():
    remote = FakeRemote(a=FakeWorker(["celery"]))
    remote.send = lambda name, hosts: None  # the shutdown never reaches it
    outcome = controls(remote).stop("c1", command())
    assert outcome.status == "failed" and "still answers" in outcome.reason


@pytest.mark.parametrize("kind", ["quiet", "stop", "pool"])
def test_a_worker_that_does_not_answer_is_not_found_or_unanswered_and_nothing_is_sent(kind):
    remote = FakeRemote(a=FakeWorker(["celery"], answers=False))
    known = getattr(controls(remote), kind)("c1", command("a@host", {"delta": 1}))
    assert known.status == "failed" and "did not answer within 5s" in known.reason
    unknown = getattr(controls(remote), kind)("c1", command("z@host", {"delta": 1}))
    assert unknown.status == "failed" and unknown.reason.startswith("not found: no worker named 'z@host'")
    assert remote.sent == []


def test_pool_grows_and_shrinks_by_the_delta_and_says_from_what_to_what():
    remote = FakeRemote(a=FakeWorker(pool=2))
    workers = controls(remote)
    grown = workers.pool("c1", command(params={"delta": 3}))
    assert (grown.status, grown.details) == ("done", {"before": 2, "after": 5})
    shrunk = workers.pool("c2", command(params={"delta": -4}))
    assert (shrunk.status, shrunk.details) == ("done", {"before": 5, "after": 1})
    assert [(name, args) for name, args, _ in remote.sent] == [("pool_grow", {"n": 3}), ("pool_shrink", {"n": 4})]
    assert remote.workers["a@host"].pool == 1


@pytest.mark.parametrize("delta, why", [(-2, "would leave none"), (999 + 1, "at most 100"), (0, "non-zero"), (1.5, "whole number"),
                                        (True, "not a pool change"), ("2", "not a pool change"), (None, "not a pool change")])
def test_a_pool_change_out_of_bounds_never_reaches_the_worker(delta, why):
    remote = FakeRemote(a=FakeWorker(pool=2))
    outcome = controls(remote).pool("c1", command(params={"delta": delta}))
    assert outcome.status == "failed" and why in outcome.reason
    assert remote.sent == [] and remote.workers["a@host"].pool == 2


def test_a_pool_the_worker_cannot_change_is_failed_with_its_words():
    remote = FakeRemote(a=FakeWorker(refuses={"pool_grow": "pool_grow is not supported with autoscale. Adjust autoscale range instead."}))
    outcome = controls(remote).pool("c1", command(params={"delta": 1}))
    assert outcome.status == "failed" and "not supported with autoscale" in outcome.reason


def test_pool_size_is_the_processes_prefork_lists_else_its_maximum():
    assert pool_size({"pool": {"max-concurrency": 2, "processes": [1, 2, 3, 4]}}) == 4
    assert pool_size({"pool": {"max-concurrency": 8}}) == 8
    assert pool_size({"pool": {"max-concurrency": True}}) is None
    assert pool_size({}) is None and pool_size("x") is None
