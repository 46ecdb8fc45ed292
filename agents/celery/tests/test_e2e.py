"""End to end: a real redis-server, a real Celery worker, the real jobwatch and the agent.

Tasks run in Celery; everything is checked through jobwatch's HTTP API against what
Celery itself reported (its result backend, the worker's pid and name).
"""
import json
import os
import time

import pytest

from e2e_harness import logs_on_failure, started_cluster, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from started_cluster(tmp_path_factory, "celery-e2e")


@pytest.fixture(autouse=True)
def show_logs_on_failure(request, cluster):
    yield from logs_on_failure(request, cluster)


def finished(cluster, task_id, state):
    job = cluster.jobwatch.job_by_external_id(task_id)
    return job if job is not None and job["state"] == state else None


def test_worker_is_listed_as_celery_reports_it(cluster):
    def worker():
        [w] = cluster.jobwatch.call("GET", "/api/workers")["data"]
        return w if w["queues"] and w["concurrency"] is not None else None

    w = wait_for(worker, 20, "the worker's queues and pool size")
    assert w["hostname"] == cluster.worker_name and w["externalId"] == cluster.worker_name
    assert w["pid"] == cluster.worker.popen.pid  # the worker's main process
    assert w["state"] in ("online", "idle", "busy")
    assert w["concurrency"] == 2 and w["queues"] == ["celery"]
    assert w["metadata"]["sw_ident"] == "py-celery" and w["metadata"]["sw_ver"].startswith("5.2")
    assert w["metadata"]["freq"] > 0 and len(w["metadata"]["loadavg"]) == 3


def test_tasks_that_succeed_fail_and_retry_show_celerys_states_and_durations(cluster):
    app = cluster.app
    ok = app.sleepy.delay(0.5)
    bad = app.boom.delay("it broke")
    flaky = app.flaky.delay()
    assert ok.get(timeout=20) == 0.5
    with pytest.raises(ValueError):
        bad.get(timeout=20)
    assert flaky.get(timeout=20) == "second attempt"

    job = wait_for(lambda: finished(cluster, ok.id, "completed"), 10, "the sleepy task completed")
    assert job["name"] == "e2e_app.sleepy" and job["queue"] == "celery" and job["workerId"] == cluster.worker_name
    assert [h["state"] for h in job["stateHistory"]] == ["queued", "active", "completed"]
    # Celery measured the run itself (`runtime` of task-succeeded); jobwatch's duration is start to finish
    runtime_ms = job["extensions"]["runtime"] * 1000
    assert 500 <= runtime_ms < 5000
    assert abs(job["durationMs"] - runtime_ms) < 250, (job["durationMs"], runtime_ms)
    assert ok.date_done is not None

    failed = wait_for(lambda: finished(cluster, bad.id, "failed"), 10, "the failing task failed")
    assert failed["error"] == "ValueError('it broke')"
    assert "Traceback" in failed["stacktrace"] and "it broke" in failed["stacktrace"]
    assert failed["durationMs"] is not None and failed["completedAt"] is not None

    retried = wait_for(lambda: finished(cluster, flaky.id, "completed"), 10, "the flaky task completed on its second attempt")
    assert retried["attempt"] == 2
    # the run that succeeded had no error: the first run's is not the job's current error
    assert retried["error"] is None and retried["stacktrace"] is None and retried["durationMs"] >= 0
    states = [h["state"] for h in retried["stateHistory"]]
    # Celery publishes the retry's message (task-received, an ETA: scheduled) before the
    # pool reports task-retried, so the two can come in either order.
    assert states[:2] == ["queued", "active"] and states[-2:] == ["active", "completed"] and "retrying" in states, states


def test_a_tasks_arguments_kwargs_and_result_reach_its_detail_whole_masked_by_the_agent_and_searchable(cluster):
    app = cluster.app
    charge = app.charge.delay({"owner": "ada", "login": {"password": "hunter2"}}, 12.5, invoice_id="INV-7", card={"card_number": "4242424242424242", "exp": "12/30"})
    items = [f"item-{n:04d}" for n in range(300)]  # its repr is 3,900 characters: the event carries 1,024 of them
    bulk = app.bulk.delay(items)
    signed = app.sign_in.delay("ada", "hunter2")
    big = app.big_report.delay(5 * 1024 * 1024)
    assert charge.get(timeout=20)["charged"] == 12.5 and bulk.get(timeout=20) == 300 and signed.get(timeout=20) == "ada signed in"
    assert len(big.get(timeout=30)) == 5 * 1024 * 1024

    job = wait_for(lambda: finished(cluster, charge.id, "completed"), 15, "the charge task completed")
    # jobwatch masks nothing here (REDACT_KEYS=none): the agent did, at every depth
    assert job["args"] == {"args": [{"owner": "ada", "login": {"password": "[redacted]"}}, 12.5],
                           "kwargs": {"invoice_id": "INV-7", "card": {"card_number": "[redacted]", "exp": "12/30"}}}
    assert job["result"] == {"charged": 12.5, "invoice_id": "INV-7", "receipt": {"token": "[redacted]"}}
    assert "hunter2" not in json.dumps(job) and "4242424242424242" not in json.dumps(job) and "rcpt-tok" not in json.dumps(job)
    found = cluster.jobwatch.call("GET", "/api/jobs?kwargs.invoice_id=INV-7")["data"]
    assert [each["externalId"] for each in found] == [charge.id]

    # whole, from the result backend (result_extended), not the 1,024 characters of the event's repr
    bulked = wait_for(lambda: finished(cluster, bulk.id, "completed"), 15, "the bulk task completed")
    assert bulked["args"] == {"args": [items], "kwargs": {}} and bulked["result"] == 300

    # --omit-args e2e_app.sign_in: no argument of it was sent, from any event or the backend; its result was
    signed_in = wait_for(lambda: finished(cluster, signed.id, "completed"), 15, "the sign_in task completed")
    assert signed_in["args"] is None and signed_in["result"] == "ada signed in"

    # a result past what the agent reads from the backend (4 MiB): the event's repr, which Celery cut
    reported = wait_for(lambda: finished(cluster, big.id, "completed"), 15, "the big report completed")
    assert reported["result"].startswith("xxxx") and "..." in reported["result"] and len(reported["result"]) < 1100


def test_a_task_with_an_eta_is_scheduled_until_it_runs(cluster):
    sent_at = time.time()
    result = cluster.app.add.apply_async((2, 3), countdown=6)
    job = wait_for(lambda: finished(cluster, result.id, "scheduled"), 5, "the ETA task to show as scheduled")
    assert abs(sent_at + 6 - _epoch(job["scheduledFor"])) < 1.0
    assert result.get(timeout=20) == 5
    done = wait_for(lambda: finished(cluster, result.id, "completed"), 10, "the ETA task completed")
    assert _epoch(done["startedAt"]) >= _epoch(job["scheduledFor"]) - 0.5


def test_queue_depth_counts_every_priority_list_and_the_consumers(cluster):
    # Nothing consumes "parked": its depth is exactly what was sent, over Redis's priority sub-lists.
    for priority in (0, 0, 5, 9, 9, 9):
        cluster.app.add.apply_async((1, 1), queue="parked", priority=priority)

    def depths():
        queues = {q["name"]: q for q in cluster.jobwatch.call("GET", "/api/queues")["data"]}
        parked, celery = queues.get("parked"), queues.get("celery")
        # jobwatch counts a queue's jobs until the agent's snapshot of it comes, which carries extensions
        from_agent = parked and celery and "paused" in parked["extensions"] and "paused" in celery["extensions"]
        return (parked, celery) if from_agent and parked["depth"] == 6 and celery["consumers"] == 1 else None

    parked, celery = wait_for(depths, 10, "the agent's snapshots: queue depth 6 for parked and one consumer of celery")
    assert parked["consumers"] == 0 and celery["depth"] == 0
    # nothing paused them: Celery has no paused state, the agent says whether jobwatch paused one
    assert parked["extensions"] == {"paused": False} and celery["extensions"] == {"paused": False}


def test_revoke_from_jobwatch_terminates_the_running_task_in_celery(cluster):
    running = cluster.app.sleepy.delay(30)
    job = wait_for(lambda: finished(cluster, running.id, "active"), 15, "the long task to be active")
    busy = lambda: [w for w in cluster.jobwatch.call("GET", "/api/workers")["data"] if w["state"] == "busy" and w["activeJobs"] >= 1]  # noqa: E731
    wait_for(busy, 10, "the worker's heartbeat to report it busy")
    assert cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/revoke")["state"] == "cancelled"
    wait_for(lambda: running.state == "REVOKED", 15, "Celery to report the task REVOKED")
    # jobwatch shows cancelled at once; Celery's own task-revoked event then says the run was terminated
    revoked = wait_for(lambda: _cancelled_by_celery(cluster, running.id), 10, "Celery's task-revoked event in jobwatch")
    assert revoked["extensions"]["signum"] == 15 and revoked["completedAt"] is not None
    wait_for(lambda: (cluster.jobwatch.job_by_external_id(running.id)["lastCommand"] or {}).get("status") == "done", 10, "the revoke command acknowledged done")


def test_retry_from_jobwatch_resends_the_task_with_its_arguments(cluster, tmp_path):
    flag = str(tmp_path / "flag")
    result = cluster.app.needs_flag.delay(flag)
    with pytest.raises(RuntimeError):
        result.get(timeout=20)
    job = wait_for(lambda: finished(cluster, result.id, "failed"), 10, "the task failed")
    open(flag, "w").close()
    assert cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/retry")["state"] == "retrying"
    again = wait_for(lambda: finished(cluster, result.id, "completed"), 15, "the retried task completed in Celery")
    assert again["attempt"] == 2 and again["lastCommand"]["status"] == "done" and again["lastCommand"]["type"] == "retry"
    # one run added by hand; the second run's duration and no error of the first
    assert again["manualRetries"] == 1 and again["error"] is None and 0 <= again["durationMs"] < 15000
    assert cluster.app.app.AsyncResult(result.id).get(timeout=5) == "flag found"


def test_a_retry_whose_arguments_are_unknown_is_reported_not_guessed(cluster):
    result = cluster.app.forgetful.delay()  # ignore_result: the backend never learns its arguments
    job = wait_for(lambda: finished(cluster, result.id, "failed"), 15, "the forgetful task failed")
    cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/retry")
    detail = wait_for(lambda: _with_command_status(cluster, result.id, "failed"), 10, "the retry reported as not carried out")
    assert "no record of this task" in detail["lastCommand"]["reason"]
    assert detail["lastCommand"]["completedAt"] is not None


def test_a_task_whose_root_id_is_40_nested_lists_costs_no_event_of_the_20_tasks_around_it(cluster):
    nested = 1
    for _ in range(40):
        nested = [nested]
    before = [cluster.app.add.delay(i, 1) for i in range(10)]
    deep = cluster.app.app.send_task("e2e_app.add", (100, 1), root_id=nested)  # the producer's value, copied into every event of the task
    after = [cluster.app.add.delay(i, 2) for i in range(10)]
    results = before + [deep] + after
    assert [r.get(timeout=30) for r in results] == [i + 1 for i in range(10)] + [101] + [i + 2 for i in range(10)]
    ids = {r.id for r in results}
    wait_for(lambda: ids <= {j["externalId"] for j in cluster.jobwatch.jobs(state="completed")}, 20, "all 21 tasks completed in jobwatch")
    kept = cluster.jobwatch.job_by_external_id(deep.id)["extensions"]["rootId"]
    for _ in range(2, 9):  # extensions is level 1: seven lists are kept, then the mark
        kept = kept[0]
    assert kept == "…[truncated: deeper than 8 levels]"
    log = cluster.agent.output()
    assert "refused" not in log and "dropped" not in log


def test_a_revoke_of_a_task_the_agent_never_reported_is_refused_and_reaches_no_worker(cluster):
    forged = "forged-task\nFORGED line: the agent stopped"
    for task_id in ("forged-task-1", forged):
        event = {"type": "job_state_change", "timestamp": _iso(time.time()), "framework": "celery", "connectionId": cluster.connection_id,
                 "job": {"externalId": task_id, "name": "e2e_app.add", "queue": "celery", "state": "queued"}}
        assert cluster.jobwatch.ingest(cluster.api_key, [event])["accepted"] == 1
        job = wait_for(lambda: cluster.jobwatch.job_by_external_id(task_id), 10, "the forged job listed")
        cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/revoke")
    unknown = wait_for(lambda: _with_command_status(cluster, "forged-task-1", "failed"), 15, "the revoke of an unknown task refused")
    assert "not a task this agent reported, and Celery knows no task of that id" in unknown["lastCommand"]["reason"]
    wait_for(lambda: _with_command_status(cluster, forged, "failed"), 15, "the revoke of an id with a newline refused")
    revoked = cluster.app.app.control.inspect(timeout=2).revoked() or {}
    assert revoked and not any("forged-task-1" in ids for ids in revoked.values()), revoked
    # the id with a newline is in the agent's log, escaped: it forged no line
    assert "revoke of task forged-task\\nFORGED line: the agent stopped -> failed" in cluster.agent.output()
    assert not [line for line in cluster.agent.output().splitlines() if line.startswith("FORGED")]


def test_a_retry_goes_to_the_queue_the_agent_reported_not_to_one_only_jobwatch_was_told(cluster, tmp_path):
    flag = str(tmp_path / "flag")
    result = cluster.app.needs_flag.delay(flag)
    with pytest.raises(RuntimeError):
        result.get(timeout=20)
    wait_for(lambda: finished(cluster, result.id, "failed"), 10, "the task failed")
    # anyone with the API key moves the job to another queue in jobwatch; its retry command then names that queue
    moved = {"type": "job_state_change", "timestamp": _iso(time.time()), "framework": "celery", "connectionId": cluster.connection_id,
             "job": {"externalId": result.id, "name": "e2e_app.needs_flag", "queue": "nobody-consumes-this", "state": "failed"}}
    assert cluster.jobwatch.ingest(cluster.api_key, [moved])["accepted"] == 1
    job = wait_for(lambda: (lambda j: j if j and j["queue"] == "nobody-consumes-this" else None)(cluster.jobwatch.job_by_external_id(result.id)), 10, "the job moved")
    open(flag, "w").close()
    cluster.jobwatch.call("POST", f"/api/jobs/{job['id']}/retry")
    again = wait_for(lambda: finished(cluster, result.id, "completed"), 20, "the retried task run by the worker of its own queue")
    assert again["lastCommand"]["status"] == "done"
    import redis

    assert redis.Redis(host="127.0.0.1", port=cluster.redis_port).llen("nobody-consumes-this") == 0


def test_the_spool_directory_is_the_agents_alone(cluster):
    spool = os.path.join(cluster.tmp, "spool")
    assert oct(os.stat(spool).st_mode & 0o777) == oct(0o700)


def test_nothing_is_lost_while_jobwatch_is_down(cluster):
    jobwatch, app = cluster.jobwatch, cluster.app
    spanning = [app.sleepy.delay(3)]  # starts before the outage, finishes during it
    wait_for(lambda: spanning[0].state == "STARTED", 15, "the spanning task to run in Celery")
    jobwatch.stop()
    down_at = time.monotonic()
    sent = [app.add.delay(i, i) for i in range(20)]
    assert [r.get(timeout=20) for r in sent] == [2 * i for i in range(20)]
    assert [r.get(timeout=20) for r in spanning] == [3]
    time.sleep(max(0.0, 3.0 - (time.monotonic() - down_at)))  # down for at least 3 s
    jobwatch.start()
    jobwatch.call("POST", "/api/auth/login", {"email": "e2e@example.com", "password": "an end-to-end password"})

    ids = {r.id for r in sent + spanning}
    wait_for(lambda: ids <= {j["externalId"] for j in jobwatch.jobs(state="completed")}, 20, "all 21 tasks of the outage completed in jobwatch")
    for result in spanning:
        job = jobwatch.job_by_external_id(result.id)
        assert [h["state"] for h in job["stateHistory"]] == ["queued", "active", "completed"]
        assert abs(job["durationMs"] - job["extensions"]["runtime"] * 1000) < 250
    log = cluster.agent.output()
    assert "flush failed: jobwatch unreachable" in log and "jobwatch reachable again" in log
    assert " ERROR " not in log  # nothing refused, rejected or dropped


def test_the_agent_keeps_its_spool_across_its_own_restart(cluster):
    jobwatch = cluster.jobwatch
    jobwatch.stop()
    sent = [cluster.app.add.delay(100 + i, 0) for i in range(10)]
    assert [r.get(timeout=20) for r in sent] == [100 + i for i in range(10)]
    # sent, received, started, succeeded for each task, in the spool (or still in memory)
    wait_for(lambda: cluster.spooled_events() >= 40, 10, "the agent to spool the outage's events")
    cluster.agent.stop()  # SIGTERM: flushes to the spool, since jobwatch is down
    assert cluster.agent.popen.returncode == 0
    assert "events kept in the spool for the next start" in cluster.agent.output()
    jobwatch.start()
    jobwatch.call("POST", "/api/auth/login", {"email": "e2e@example.com", "password": "an end-to-end password"})
    cluster.agent = cluster.start_agent()
    ids = {r.id for r in sent}
    wait_for(lambda: ids <= {j["externalId"] for j in jobwatch.jobs(state="completed")}, 20, "the spooled tasks completed in jobwatch")
    assert "kept from a previous run; sending them first" in cluster.agent.output()
    wait_for(lambda: cluster.spooled_events() == 0, 10, "the spool to be empty")


def test_a_task_the_agent_joined_midway_keeps_its_name(cluster):
    # The agent misses task-sent/received/started; task-succeeded names no task, so it asks Celery.
    cluster.agent.stop()
    running = cluster.app.sleepy.delay(5)
    wait_for(lambda: running.state == "STARTED", 15, "the task running")
    cluster.agent = cluster.start_agent()
    wait_for(lambda: "capturing task-* and worker-* events" in cluster.agent.output(), 15, "the new agent capturing")
    assert not running.ready(), "the task ended before the agent was up: make it longer"
    assert running.get(timeout=20) == 5
    job = wait_for(lambda: finished(cluster, running.id, "completed"), 15, "the task completed in jobwatch")
    assert job["name"] == "e2e_app.sleepy" and job["workerId"] == cluster.worker_name
    assert abs(job["durationMs"] - 5000) < 500  # from Celery's runtime: the agent never saw task-started


def test_the_agent_reconnects_when_the_broker_restarts(cluster):
    log_before = len(cluster.agent.output())
    cluster.restart_redis(down_s=2.0)
    new_lines = lambda: cluster.agent.output()[log_before:]  # noqa: E731
    # Celery's events are fire-and-forget (Redis pub/sub): what is published before the agent is back is gone.
    wait_for(lambda: "broker connection lost" in new_lines() and "connected to broker" in new_lines(), 30, "the agent to reconnect")
    result = wait_for(lambda: _sent(cluster.app.add, 7, 7), 30, "the producer to reach the broker again")
    assert result.get(timeout=30) == 14  # the worker reconnected too
    wait_for(lambda: finished(cluster, result.id, "completed"), 20, "a task after the restart in jobwatch")


def test_a_stopped_worker_goes_offline(cluster):
    cluster.worker.stop()  # warm shutdown: Celery sends worker-offline
    wait_for(lambda: cluster.jobwatch.call("GET", "/api/workers")["data"][0]["state"] == "offline", 10, "the worker offline in jobwatch")


def _sent(task, *args):
    try:
        return task.delay(*args)
    except Exception:  # the producer's pool may hold a connection from before the restart
        return None


def _cancelled_by_celery(cluster, task_id):
    job = finished(cluster, task_id, "cancelled")
    return job if job and job["extensions"].get("terminated") is True else None


def _with_command_status(cluster, task_id, status):
    job = cluster.jobwatch.job_by_external_id(task_id)
    return job if job and job["lastCommand"] and job["lastCommand"]["status"] == status else None


def _iso(epoch):
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _epoch(iso):
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
