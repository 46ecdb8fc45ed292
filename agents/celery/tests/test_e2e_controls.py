"""The controls against a real Celery worker on a real redis-server: what each command does in Celery.

The agent's command runner (as the agent builds it) carries out each command on Celery's
remote control; each test then checks the worker's side effects with Celery's own tools
(`inspect()`, the broker's lists, the result backend, the worker process), never the
agent's word alone.
"""
import itertools
import os
import socket
import time

import pytest
from celery import Celery

from e2e_harness import RedisServer, celery_env, close_results, producer_app, start_worker, wait_for
from jobwatch_celery.commands import CommandRunner
from jobwatch_celery.paused_queues import PausedQueues
from jobwatch_celery.remote_control import RemoteControl

pytestmark = pytest.mark.e2e
HOST = socket.gethostname()
_ids = itertools.count(1)



class Rig:
    """redis-server, a worker consuming `celery` and `mail` (pool of 2), and the agent's command runner."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.redis = RedisServer(tmp)
        self.env = celery_env(self.redis.url)
        self.worker_name = f"ctl-a-{os.getpid()}@{HOST}"
        self.worker = start_worker(self.env, tmp, self.worker_name, queues="celery,mail", concurrency=2)
        self.extra_workers = []
        self.producer = producer_app(self.redis.url)
        self.agent_app = Celery("jobwatch-celery", broker=self.redis.url, backend=self.redis.url, set_as_current=False)
        self.reported = {}  # task id -> what the agent reported of it
        self.paused = PausedQueues(tmp)
        # a worker that does not answer costs the reply wait: 2 s rather than 5 keeps the not-found test short
        self.runner = CommandRunner(self.agent_app, None, reported=self.reported.get, watched_queues=lambda: {"celery", "mail", "parked"},
                                    paused=self.paused, known_workers=lambda: {self.worker_name}, remote=RemoteControl(self.agent_app, reply_timeout_s=2.0))
        wait_for(lambda: self.inspect().ping(), 30, "the worker to answer")

    def inspect(self, timeout=2.0):
        return self.agent_app.control.inspect(destination=[self.worker_name], timeout=timeout)

    def consumed(self):
        answer = self.inspect().active_queues() or {}
        return sorted(q["name"] for q in answer.get(self.worker_name, [])) if self.worker_name in answer else None

    def pool(self):
        stats = (self.inspect().stats() or {}).get(self.worker_name)
        return len(stats["pool"]["processes"]) if stats else None

    def waiting(self, queue):
        return self.redis.client().llen(queue)

    def run(self, command):
        outcome = self.runner.execute(command)
        assert outcome is not None, "the broker refused the command"
        return outcome.to_json()

    def stop(self):
        for process in (self.worker, *self.extra_workers):
            process.stop()
        close_results(self.producer.app)
        self.redis.stop()

    def logs(self):
        return "\n".join(f"----- {p.name} -----\n{p.output()[-4000:]}" for p in (self.worker, *self.extra_workers))


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    rig = Rig(str(tmp_path_factory.mktemp("celery-controls")))
    try:
        yield rig
    finally:
        rig.stop()


@pytest.fixture(autouse=True)
def show_logs_on_failure(request, rig):
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(rig.logs())


def queue_command(kind, queue, params=None):
    return {"id": f"q{next(_ids)}", "type": kind, "queue": queue, "params": params, "createdAt": "2026-11-21T10:00:00.000Z"}


def worker_command(kind, host, params=None):
    return {"id": f"w{next(_ids)}", "type": kind, "workerId": host, "hostname": host, "pid": None, "params": params, "createdAt": "2026-11-21T10:00:00.000Z"}


def job_command(kind, task_id, queue=None):
    return {"id": f"j{next(_ids)}", "type": kind, "jobId": "job", "externalId": task_id, "name": "e2e_app.add", "queue": queue, "createdAt": "2026-11-21T10:00:00.000Z"}


def rate_command(name, rate):
    return {"id": f"t{next(_ids)}", "type": "task.rate_limit", "name": name, "queue": None, "params": {"rate": rate}, "createdAt": "2026-11-21T10:00:00.000Z"}


def pause_mail(rig):
    assert rig.run(queue_command("queue.pause", "mail"))["status"] == "done"
    wait_for(lambda: rig.consumed() == ["celery"], 10, "the worker to stop consuming mail")
    # kombu's Redis consumer may still be in a BRPOP (1 s) that included the queue: a message
    # it gets then goes back to the queue ("Requeuing undeliverable message"), so wait it out
    time.sleep(1.2)


def test_a_paused_queue_keeps_its_tasks_queued_until_it_is_resumed(rig):
    outcome = rig.run(queue_command("queue.pause", "mail"))
    assert outcome["status"] == "done" and outcome["details"] == {"workers": 1}, outcome
    assert rig.paused.is_paused("mail")
    wait_for(lambda: rig.consumed() == ["celery"], 10, "the worker to stop consuming mail")
    time.sleep(1.2)  # see pause_mail
    held = rig.producer.add.apply_async((20, 1), queue="mail")
    ran = rig.producer.add.delay(30, 1)
    assert ran.get(timeout=20) == 31  # the worker still works its other queue
    assert rig.waiting("mail") == 1 and held.state == "PENDING"

    outcome = rig.run(queue_command("queue.resume", "mail"))
    assert outcome["status"] == "done" and outcome["details"] == {"workers": 1}, outcome
    assert held.get(timeout=20) == 21
    assert rig.consumed() == ["celery", "mail"] and not rig.paused.is_paused("mail")


def test_a_worker_that_consumes_a_paused_queue_again_is_stopped_and_given_it_back_on_resume(rig):
    pause_mail(rig)
    # as a worker restarted with -Q celery,mail would: it consumes the paused queue again
    rig.agent_app.control.add_consumer("mail", destination=[rig.worker_name], reply=True, timeout=5)
    wait_for(lambda: rig.consumed() == ["celery", "mail"], 10, "the worker to consume mail again")
    asked_at = time.time()
    rig.runner.queues.keep_paused(rig.runner.remote.ask("active_queues"), asked_at)
    wait_for(lambda: rig.consumed() == ["celery"], 10, "the agent to cancel the consumer of the paused queue")
    assert rig.run(queue_command("queue.resume", "mail"))["status"] == "done"
    wait_for(lambda: rig.consumed() == ["celery", "mail"], 10, "the worker to consume mail after the resume")


def test_a_queue_no_worker_consumes_and_no_one_named_is_not_found(rig):
    outcome = rig.run(queue_command("queue.pause", "nobody-named-this"))
    assert outcome["status"] == "failed" and outcome["reason"].startswith("not found:"), outcome
    outcome = rig.run(queue_command("queue.resume", "mail"))
    assert outcome["status"] == "failed" and "not paused" in outcome["reason"]


def test_clean_waiting_purges_the_queue_and_the_purged_tasks_never_run(rig):
    pause_mail(rig)
    purged = [rig.producer.add.apply_async((i, 0), queue="mail") for i in range(3)]
    rig.producer.add.apply_async((9, 0), queue="mail", priority=9)  # kombu keeps it in another list
    assert rig.run(queue_command("queue.clean", "mail", {"mode": "finished", "olderThanMs": 0, "states": ["completed"]}))["status"] == "unsupported"
    outcome = rig.run(queue_command("queue.clean", "mail", {"mode": "waiting"}))
    assert outcome["status"] == "done" and outcome["details"] == {"removed": 4}, outcome
    assert rig.waiting("mail") == 0
    assert rig.run(queue_command("queue.resume", "mail"))["status"] == "done"
    assert rig.producer.add.apply_async((5, 5), queue="mail").get(timeout=20) == 10
    assert [r.state for r in purged] == ["PENDING"] * 3


def test_delete_revokes_a_waiting_task_which_the_worker_then_discards(rig):
    pause_mail(rig)
    waiting = rig.producer.add.apply_async((1, 2), queue="mail")
    rig.reported[waiting.id] = {"queue": "mail", "state": "queued"}
    outcome = rig.run(job_command("delete", waiting.id, "mail"))
    assert outcome["status"] == "done", outcome
    assert waiting.id in (rig.inspect().revoked() or {})[rig.worker_name]
    assert rig.run(queue_command("queue.resume", "mail"))["status"] == "done"
    wait_for(lambda: waiting.state == "REVOKED", 20, "the worker to discard the revoked task")


def test_delete_of_a_task_with_a_countdown_revokes_it_in_the_workers_timer(rig):
    later = rig.producer.add.apply_async((3, 4), countdown=60)
    wait_for(lambda: any(e["request"]["id"] == later.id for e in (rig.inspect().scheduled() or {}).get(rig.worker_name, [])), 10, "the worker to hold the ETA task")
    # the agent never reported it: Celery's own word (the worker's timer) is what lets it act
    outcome = rig.run(job_command("delete", later.id))
    assert outcome["status"] == "done", outcome
    assert later.id in (rig.inspect().revoked() or {})[rig.worker_name]


def test_delete_of_a_finished_task_forgets_its_result(rig):
    finished = rig.producer.add.delay(2, 2)
    assert finished.get(timeout=20) == 4
    outcome = rig.run(job_command("delete", finished.id))
    assert outcome["status"] == "done" and outcome["details"] == {"forgotten": True}, outcome
    assert rig.agent_app.backend.get_task_meta(finished.id)["status"] == "PENDING"  # no record left


def test_delete_of_a_task_celery_no_longer_has_is_not_found(rig):
    pause_mail(rig)
    gone = rig.producer.add.apply_async((1, 1), queue="mail")
    rig.reported[gone.id] = {"queue": "mail", "state": "queued"}
    rig.redis.client().delete("mail")  # purged behind jobwatch's back
    outcome = rig.run(job_command("delete", gone.id, "mail"))
    assert outcome["status"] == "failed" and outcome["reason"].startswith("not found:"), outcome
    assert gone.id not in (rig.inspect().revoked() or {}).get(rig.worker_name, [])
    assert rig.run(queue_command("queue.resume", "mail"))["status"] == "done"


def test_delete_does_not_stop_a_running_task(rig):
    running = rig.producer.sleepy.delay(3)
    wait_for(lambda: running.state == "STARTED", 15, "the task to run")
    outcome = rig.run(job_command("delete", running.id))
    assert outcome["status"] == "failed" and "running" in outcome["reason"]
    assert running.get(timeout=20) == 3


def test_retry_now_of_a_task_waiting_to_retry_is_unsupported_and_promote_and_kill_too(rig):
    retrying = rig.producer.retries_later.delay()
    wait_for(lambda: retrying.state == "RETRY", 15, "the task to wait for its retry")
    outcome = rig.run(job_command("retry", retrying.id))
    assert outcome["status"] == "unsupported" and "ETA task in the memory of the worker" in outcome["reason"]
    for kind in ("promote", "kill"):
        assert rig.run(job_command(kind, retrying.id))["status"] == "unsupported"
    assert rig.run(job_command("delete", retrying.id))["status"] == "done"  # revoked in the worker's timer
    assert retrying.id in (rig.inspect().revoked() or {})[rig.worker_name]


def test_rate_limit_is_set_and_cleared_on_the_workers_that_have_the_task(rig):
    def limits():
        return (rig.inspect().registered("rate_limit") or {}).get(rig.worker_name, [])

    outcome = rig.run(rate_command("e2e_app.add", "10/m"))
    assert outcome["status"] == "done" and outcome["details"] == {"workers": 1}, outcome
    assert "e2e_app.add [rate_limit=10/m]" in limits()
    assert rig.run(rate_command("e2e_app.add", None))["status"] == "done"
    assert "e2e_app.add" in limits()
    missing = rig.run(rate_command("e2e_app.no_such_task", "1/s"))
    assert missing["status"] == "failed" and missing["reason"].startswith("not found:")
    refused = rig.run(rate_command("e2e_app.add", "10/fortnight"))
    assert refused["status"] == "failed" and "not a Celery rate limit" in refused["reason"]
    assert "e2e_app.add" in limits()


def test_pool_grows_and_shrinks_as_the_worker_reports_it(rig):
    assert rig.pool() == 2
    outcome = rig.run(worker_command("worker.pool", rig.worker_name, {"delta": 2}))
    assert outcome["status"] == "done" and outcome["details"] == {"before": 2, "after": 4}, outcome
    wait_for(lambda: rig.pool() == 4, 10, "the pool to grow to 4")
    assert rig.run(worker_command("worker.pool", rig.worker_name, {"delta": -3}))["status"] == "done"
    wait_for(lambda: rig.pool() == 1, 10, "the pool to shrink to 1")
    refused = rig.run(worker_command("worker.pool", rig.worker_name, {"delta": -1}))
    assert refused["status"] == "failed" and "would leave none" in refused["reason"]
    assert rig.pool() == 1
    assert rig.run(worker_command("worker.pool", rig.worker_name, {"delta": 1}))["status"] == "done"
    wait_for(lambda: rig.pool() == 2, 10, "the pool back to 2")


def test_a_worker_nobody_saw_is_not_found(rig):
    for kind, params in (("worker.quiet", None), ("worker.stop", None), ("worker.pool", {"delta": 1})):
        outcome = rig.run(worker_command(kind, f"nobody@{HOST}", params))
        assert outcome["status"] == "failed" and outcome["reason"].startswith("not found:"), (kind, outcome)


def test_stop_shuts_the_worker_down_and_its_process_exits(rig):
    name = f"ctl-b-{os.getpid()}@{HOST}"
    worker = start_worker(rig.env, rig.tmp, name, queues="parked", concurrency=1)
    rig.extra_workers.append(worker)
    wait_for(lambda: rig.agent_app.control.ping(destination=[name], timeout=1), 30, "the second worker to answer")
    outcome = rig.run(worker_command("worker.stop", name))
    assert outcome["status"] == "done", outcome
    assert worker.popen.wait(20) == 0
    assert "Got shutdown from remote" in worker.output()


def test_quiet_stops_every_consumer_of_the_worker(rig):
    outcome = rig.run(worker_command("worker.quiet", rig.worker_name))
    assert outcome["status"] == "done" and outcome["details"] == {"queues": 2}, outcome
    wait_for(lambda: rig.consumed() == [], 10, "the worker to consume nothing")
    held = rig.producer.add.delay(1, 1)
    time.sleep(1.5)
    assert held.state == "PENDING" and rig.waiting("celery") == 1
    assert rig.inspect().ping()  # quiet, not stopped
