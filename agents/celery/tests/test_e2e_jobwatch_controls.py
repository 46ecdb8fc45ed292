"""The controls the whole way: jobwatch's dashboard routes -> a command -> the agent -> Celery -> the outcome jobwatch shows.

A real jobwatch, the agent as a user runs it, a real Celery worker on a real redis-server
(its own, not test_e2e.py's: pausing its queue would hold that module's tasks). What
each control did is checked in Celery itself and in what jobwatch shows.
"""
import time

import pytest

from e2e_harness import logs_on_failure, started_cluster, wait_for
from jobwatch_celery.capabilities import CONCURRENCY_REASON, PROMOTE_REASON

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from started_cluster(tmp_path_factory, "celery-jobwatch-controls")


@pytest.fixture(autouse=True)
def show_logs_on_failure(request, cluster):
    yield from logs_on_failure(request, cluster)


def queue(cluster, name):
    for item in cluster.jobwatch.call("GET", "/api/queues")["data"]:
        if item["name"] == name:
            return cluster.jobwatch.call("GET", f"/api/queues/{item['id']}")
    return None


def celery_queue(cluster):
    return wait_for(lambda: queue(cluster, "celery"), 20, "the celery queue in jobwatch")


def worker(cluster):
    [item] = cluster.jobwatch.call("GET", "/api/workers")["data"]
    return item


def settled(cluster, answer):
    """The command a 202 named, once the agent reported what became of it."""
    command_id = answer["commandId"]

    def outcome():
        command = cluster.jobwatch.call("GET", f"/api/commands/{command_id}")
        return command if command["status"] != "pending" else None

    return wait_for(outcome, 20, f"the outcome of command {command_id}")


def job_in(cluster, task_id, state):
    job = cluster.jobwatch.job_by_external_id(task_id)
    return job if job is not None and job["state"] == state else None


def consumed(cluster):
    answer = cluster.app.app.control.inspect(destination=[cluster.worker_name], timeout=2).active_queues() or {}
    return sorted(q["name"] for q in answer.get(cluster.worker_name, []))


def test_the_dashboard_knows_what_celery_cannot_do_with_the_agents_reason(cluster):
    def reported():
        reports = cluster.jobwatch.call("GET", f"/api/capabilities?connectionId={cluster.connection_id}")["data"]
        return next((r for r in reports if r["framework"] == "celery"), None)

    report = wait_for(reported, 20, "the agent's capabilities in jobwatch")
    assert report["controls"]["promote"] == {"supported": False, "reason": PROMOTE_REASON}
    assert report["controls"]["queue.pause"] == {"supported": True}
    celery = celery_queue(cluster)
    assert celery["controls"]["queue.concurrency"] == {"available": False, "reason": CONCURRENCY_REASON}
    assert celery["controls"]["queue.pause"]["available"] is True
    assert "capabilities reported" in cluster.agent.output()


def test_pause_from_the_dashboard_holds_the_queues_tasks_until_resume(cluster):
    celery = celery_queue(cluster)
    paused = settled(cluster, cluster.jobwatch.call("POST", f"/api/queues/{celery['id']}/pause", expect=202))
    assert paused["status"] == "done" and paused["details"] == {"workers": 1}, paused
    assert consumed(cluster) == []
    assert wait_for(lambda: queue(cluster, "celery")["paused"] is True, 10, "the queue shown paused")
    time.sleep(1.2)  # a message the worker was already fetching goes back to the queue (see test_e2e_controls.pause_mail)
    held = cluster.app.add.delay(40, 2)
    wait_for(lambda: job_in(cluster, held.id, "queued"), 10, "the held task queued in jobwatch")
    time.sleep(1.0)
    assert held.state == "PENDING" and job_in(cluster, held.id, "queued")

    resumed = settled(cluster, cluster.jobwatch.call("POST", f"/api/queues/{celery['id']}/resume", expect=202))
    assert resumed["status"] == "done", resumed
    assert held.get(timeout=20) == 42
    wait_for(lambda: job_in(cluster, held.id, "completed"), 10, "the held task completed in jobwatch")
    assert wait_for(lambda: queue(cluster, "celery")["paused"] is False, 10, "the queue shown running")


def test_delete_from_the_dashboard_revokes_the_waiting_task_and_it_shows_cancelled(cluster):
    celery = celery_queue(cluster)
    assert settled(cluster, cluster.jobwatch.call("POST", f"/api/queues/{celery['id']}/pause", expect=202))["status"] == "done"
    time.sleep(1.2)
    waiting = cluster.app.add.delay(1, 2)
    job = wait_for(lambda: job_in(cluster, waiting.id, "queued"), 10, "the waiting task queued in jobwatch")
    deleted = settled(cluster, cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/delete", expect=202))
    assert deleted["status"] == "done", deleted
    assert settled(cluster, cluster.jobwatch.call("POST", f"/api/queues/{celery['id']}/resume", expect=202))["status"] == "done"
    wait_for(lambda: waiting.state == "REVOKED", 20, "the worker to discard the deleted task")
    wait_for(lambda: job_in(cluster, waiting.id, "cancelled"), 10, "the deleted task cancelled in jobwatch")


def test_run_now_of_a_scheduled_task_shows_why_celery_cannot(cluster):
    later = cluster.app.add.apply_async((5, 5), countdown=30)
    job = wait_for(lambda: job_in(cluster, later.id, "scheduled"), 10, "the ETA task scheduled in jobwatch")
    promoted = settled(cluster, cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/promote", expect=202))
    assert promoted["status"] == "unsupported" and promoted["reason"] == PROMOTE_REASON
    cluster.app.app.control.revoke(later.id)  # not left to run in a later test


def test_a_rate_limit_set_from_the_dashboard_reaches_the_worker(cluster):
    body = {"connectionId": cluster.connection_id, "name": "e2e_app.add", "rate": "30/m"}
    limited = settled(cluster, cluster.jobwatch.call("POST", "/api/tasks/rate-limit", body, expect=202))
    assert limited["status"] == "done" and limited["details"] == {"workers": 1}, limited
    registered = cluster.app.app.control.inspect(destination=[cluster.worker_name], timeout=2).registered("rate_limit")
    assert "e2e_app.add [rate_limit=30/m]" in registered[cluster.worker_name]
    cleared = settled(cluster, cluster.jobwatch.call("POST", "/api/tasks/rate-limit", {**body, "rate": None}, expect=202))
    assert cleared["status"] == "done"


def test_the_pool_grown_from_the_dashboard_shows_on_the_worker(cluster):
    before = worker(cluster)
    assert before["concurrency"] == 2
    grown = settled(cluster, cluster.jobwatch.call("POST", f"/api/workers/{before['id']}/pool", {"delta": 1}, expect=202))
    assert grown["status"] == "done" and grown["details"] == {"before": 2, "after": 3}, grown
    wait_for(lambda: worker(cluster)["concurrency"] == 3, 20, "jobwatch to show the pool of 3")


def test_a_paused_queue_stays_paused_across_a_restart_of_the_agent(cluster):
    celery = celery_queue(cluster)
    assert settled(cluster, cluster.jobwatch.call("POST", f"/api/queues/{celery['id']}/pause", expect=202))["status"] == "done"
    cluster.agent.stop()
    # the worker consumes the queue again behind the agent's back, as a restarted worker would
    cluster.app.app.control.add_consumer("celery", destination=[cluster.worker_name], reply=True, timeout=5)
    cluster.agent = cluster.start_agent()
    wait_for(lambda: consumed(cluster) == [], 20, "the restarted agent to cancel the paused queue's consumer again")
    assert "kept paused from a previous run" in cluster.agent.output() and "consumed it again; consumer cancelled" in cluster.agent.output()
    assert queue(cluster, "celery")["paused"] is True
    assert settled(cluster, cluster.jobwatch.call("POST", f"/api/queues/{celery['id']}/resume", expect=202))["status"] == "done"
    assert consumed(cluster) == ["celery"]


def test_stop_from_the_dashboard_shuts_the_worker_down(cluster):
    w = worker(cluster)
    stopped = settled(cluster, cluster.jobwatch.call("POST", f"/api/workers/{w['id']}/stop", expect=202))
    assert stopped["status"] == "done", stopped
    assert cluster.worker.popen.wait(20) == 0
    wait_for(lambda: worker(cluster)["state"] == "offline", 15, "the worker offline in jobwatch")
