"""Commands: acknowledged only after Celery accepted them; a retry without arguments is reported, not guessed."""
from command_fakes import FakeApp, FakeJobwatch
from jobwatch_celery.commands import CommandRunner


def command(cid, kind, task_id, name="app.add", queue="celery"):
    return {"id": cid, "type": kind, "jobId": "j" + cid, "externalId": task_id, "name": name, "queue": queue, "createdAt": "2026-11-21T10:00:00.000Z"}


EXTENDED = {"status": "FAILURE", "name": "app.add", "args": [1, 2], "kwargs": {"z": 3}, "queue": "math", "retries": 0}


def runner(app, jobwatch, signal="SIGTERM", reported=None, queues=()):
    """A runner whose agent reported the tasks in `reported` ({task id: queue}) and knows `queues`."""
    reported = {"t0": "celery", "t1": "math"} if reported is None else reported
    return CommandRunner(app, jobwatch, signal, reported=lambda task_id: {"queue": reported[task_id]} if task_id in reported else None, watched_queues=lambda: set(queues))


def test_revoke_terminates_with_the_configured_signal_and_is_acked_done():
    app, jobwatch = FakeApp(), FakeJobwatch([command("c1", "revoke", "t1")])
    assert runner(app, jobwatch, "SIGKILL").poll() == 1
    assert app.revoked == [("t1", True, "SIGKILL")]
    assert jobwatch.acks == [{"outcomes": [{"id": "c1", "status": "done"}]}]


def test_retry_resends_with_the_original_name_args_kwargs_and_queue_under_the_same_id():
    app, jobwatch = FakeApp({"t1": EXTENDED}), FakeJobwatch([command("c1", "retry", "t1", queue="math")])
    runner(app, jobwatch).poll()
    assert app.sent == [("app.add", {"args": [1, 2], "kwargs": {"z": 3}, "queue": "math", "task_id": "t1", "retries": 1})]
    assert jobwatch.acks[0]["outcomes"] == [{"id": "c1", "status": "done"}]


def test_retry_takes_the_queue_from_the_backend_when_jobwatch_does_not_know_it():
    app = FakeApp({"t1": {**EXTENDED, "queue": "reports"}})
    runner(app, FakeJobwatch([command("c1", "retry", "t1", queue=None)]), reported={}).poll()
    assert app.sent[0][1]["queue"] == "reports"


def test_retry_of_a_revoked_task_uses_a_new_id_and_says_so():
    app = FakeApp({"t1": {**EXTENDED, "status": "REVOKED"}})
    jobwatch = FakeJobwatch([command("c1", "retry", "t1")])
    runner(app, jobwatch).poll()
    [(name, options)] = app.sent
    assert options["task_id"] != "t1"
    [outcome] = jobwatch.acks[0]["outcomes"]
    assert outcome["status"] == "done" and options["task_id"] in outcome["reason"]


def test_retry_without_known_arguments_is_not_guessed_but_acked_failed_with_the_reason():
    metas = {"t1": {"status": "FAILURE", "result": "boom"}}  # result_extended off: no name, args
    app = FakeApp(metas)
    jobwatch = FakeJobwatch([command("c1", "retry", "t1"), command("c2", "retry", "t-expired")])
    CommandRunner(app, jobwatch).poll()
    assert app.sent == []
    first, second = jobwatch.acks[0]["outcomes"]
    assert first["status"] == "failed" and "result_extended=True" in first["reason"]
    assert second["status"] == "failed" and "no record of this task" in second["reason"]
    assert all(len(o["reason"]) <= 1000 for o in (first, second))


def test_retry_without_a_result_backend_is_acked_failed():
    from celery import Celery

    app = FakeApp()
    app.backend = Celery(set_as_current=False).backend  # no result backend configured
    jobwatch = FakeJobwatch([command("c1", "retry", "t1")])
    CommandRunner(app, jobwatch).poll()
    assert jobwatch.acks[0]["outcomes"][0]["status"] == "failed" and "--result-backend" in jobwatch.acks[0]["outcomes"][0]["reason"]


def test_while_the_broker_is_down_nothing_is_acked_and_the_command_comes_back():
    app, jobwatch = FakeApp({"t1": EXTENDED}, broker_down=True), FakeJobwatch([command("c1", "revoke", "t0"), command("c2", "retry", "t1")])
    commands = runner(app, jobwatch)
    assert commands.poll() == 0 and jobwatch.acks == []
    app.broker_down = False
    assert commands.poll() == 2
    assert [o["id"] for o in jobwatch.acks[0]["outcomes"]] == ["c1", "c2"]


def test_a_command_whose_ack_was_lost_is_acked_again_but_not_carried_out_twice():
    app, jobwatch = FakeApp({"t1": EXTENDED}), FakeJobwatch([command("c1", "retry", "t1")], ack_fails=True)
    commands = runner(app, jobwatch)
    assert commands.poll() == 0
    jobwatch.ack_fails = False
    assert commands.poll() == 1
    assert len(app.sent) == 1 and jobwatch.acks[0]["outcomes"] == [{"id": "c1", "status": "done"}]


def test_an_unknown_command_type_is_acked_unsupported_naming_it():
    app, jobwatch = FakeApp(), FakeJobwatch([command("c1", "pause", "t1"), command("c2", None, "t1")])
    CommandRunner(app, jobwatch).poll()
    assert jobwatch.acks[0]["outcomes"] == [
        {"id": "c1", "status": "unsupported", "reason": "this agent version does not know 'pause'"},
        {"id": "c2", "status": "unsupported", "reason": "this agent version does not know 'None'"},
    ]
    assert app.revoked == [] and app.sent == []


def test_acks_are_split_so_every_body_fits_the_services_128_kib_cap():
    import json

    from jobwatch_celery.commands import Outcome

    jobwatch = FakeJobwatch([command(f"c{i}", "retry", f"t{i}") for i in range(100)])
    commands = CommandRunner(FakeApp(), jobwatch)
    commands.execute = lambda c: Outcome(str(c["id"]), "failed", "\u00e9\u4e2d" * 600)  # escapes to 6 bytes a character
    assert commands.poll() == 100
    assert len(jobwatch.acks) > 1 and sum(len(body["outcomes"]) for body in jobwatch.acks) == 100
    assert max(len(json.dumps(body).encode()) for body in jobwatch.acks) <= 128 * 1024


def test_a_revoke_of_a_task_the_agent_never_reported_and_celery_does_not_know_is_refused():
    app, jobwatch = FakeApp(), FakeJobwatch([command("c1", "revoke", "forged-1")])
    runner(app, jobwatch).poll()
    assert app.revoked == [] and app.queried == ["forged-1"]
    [outcome] = jobwatch.acks[0]["outcomes"]
    assert outcome["status"] == "failed" and "not a task this agent reported, and Celery knows no task of that id" in outcome["reason"]


def test_a_task_the_agent_did_not_report_is_revoked_when_celery_confirms_it():
    app = FakeApp({"in-backend": {"status": "STARTED", "name": None}}, held_by_workers={"held"})
    jobwatch = FakeJobwatch([command("c1", "revoke", "in-backend"), command("c2", "revoke", "held")])
    runner(app, jobwatch, reported={}).poll()
    assert [task_id for task_id, _, _ in app.revoked] == ["in-backend", "held"]
    assert [o["status"] for o in jobwatch.acks[0]["outcomes"]] == ["done", "done"]


def test_a_task_id_that_is_no_task_id_is_refused_before_celery_is_asked():
    app = FakeApp()
    jobwatch = FakeJobwatch([command("c1", "revoke", "t0\r\nforged"), command("c2", "retry", "x" * 600), command("c3", "revoke", None), command("c4", "revoke", "x" * 500 + "…[truncated]")])
    runner(app, jobwatch, reported={"t0\r\nforged": "celery"}).poll()
    assert app.revoked == [] and app.sent == [] and app.queried == []
    reasons = [o["reason"] for o in jobwatch.acks[0]["outcomes"]]
    assert all(reason.startswith("not a Celery task id") for reason in reasons[:3])
    assert "cut to 512 characters" in reasons[3]


def test_a_retry_goes_to_the_queue_the_agent_reported_never_to_one_only_the_command_names():
    app = FakeApp({"t1": EXTENDED, "t2": EXTENDED})
    jobwatch = FakeJobwatch([command("c1", "retry", "t1", queue="elsewhere"), command("c2", "retry", "t2", queue="elsewhere"), command("c3", "retry", "t2", queue="known")])
    runner(app, jobwatch, reported={"t1": "math"}, queues={"known"}).poll()
    assert [options["queue"] for _, options in app.sent] == ["math", "known"]
    first, second, third = jobwatch.acks[0]["outcomes"]
    assert first["status"] == "done" and third["status"] == "done"
    assert second["status"] == "failed" and "queue 'elsewhere' is not a queue this agent watches" in second["reason"]


def test_a_retry_sends_the_task_celery_names_never_one_only_the_command_names():
    app = FakeApp({"t1": {**EXTENDED, "name": None}})
    jobwatch = FakeJobwatch([command("c1", "retry", "t1", name="app.delete_everything")])
    runner(app, jobwatch).poll()
    assert app.sent == [] and "does not name the task" in jobwatch.acks[0]["outcomes"][0]["reason"]


def test_a_queue_worker_or_task_name_that_names_nothing_is_refused_before_celery_is_asked():
    from fake_remote import FakeRemote, FakeWorker

    remote = FakeRemote(a=FakeWorker(["mail\nFORGED"], registered=["app.x\r"]))
    jobwatch = FakeJobwatch([
        {"id": "c1", "type": "queue.pause", "queue": "mail\nFORGED"},
        {"id": "c2", "type": "queue.clean", "queue": "q" * 256, "params": {"mode": "waiting"}},
        {"id": "c3", "type": "worker.stop", "workerId": "a@host\x1b[2J", "hostname": "a@host", "pid": None},
        {"id": "c4", "type": "task.rate_limit", "name": "app.x\r", "queue": None, "params": {"rate": "1/s"}},
        {"id": "c5", "type": "worker.pool", "workerId": None, "params": {"delta": 1}},
    ])
    CommandRunner(FakeApp(), jobwatch, watched_queues=lambda: {"mail\nFORGED"}, remote=remote).poll()
    reasons = [(o["status"], o["reason"].split(":")[0]) for o in jobwatch.acks[0]["outcomes"]]
    assert reasons == [("failed", "not a queue name"), ("failed", "not a queue name"), ("failed", "not a Celery worker name"),
                       ("failed", "not a task name"), ("failed", "not a Celery worker name")]
    assert remote.sent == [] and remote.asked == []


def test_a_control_while_the_broker_is_down_is_not_acked_and_comes_back():
    from fake_remote import FakeRemote, FakeWorker

    remote = FakeRemote(a=FakeWorker(["mail"]))
    remote.broker_down = True
    jobwatch = FakeJobwatch([{"id": "c1", "type": "queue.pause", "queue": "mail"}, {"id": "c2", "type": "worker.quiet", "workerId": "a@host"}])
    runner = CommandRunner(FakeApp(), jobwatch, watched_queues=lambda: {"mail"}, remote=remote)
    assert runner.poll() == 0 and jobwatch.acks == []
    remote.broker_down = False
    assert runner.poll() == 2
    assert [o["status"] for o in jobwatch.acks[0]["outcomes"]] == ["done", "done"]


def test_a_command_celery_chokes_on_is_failed_with_the_error_and_the_next_one_still_runs():
    from fake_remote import FakeRemote, FakeWorker

    remote = FakeRemote(a=FakeWorker(["mail"]))
    jobwatch = FakeJobwatch([{"id": "c1", "type": "queue.pause", "queue": "mail"}, {"id": "c2", "type": "queue.resume", "queue": "mail"}])
    runner = CommandRunner(FakeApp(), jobwatch, watched_queues=lambda: {"mail"}, remote=remote)
    runner.handlers["queue.pause"] = lambda command_id, command: 1 / 0
    runner.poll()
    first, second = jobwatch.acks[0]["outcomes"]
    assert first == {"id": "c1", "status": "failed", "reason": "the agent could not carry it out: ZeroDivisionError: division by zero"}
    assert second["status"] == "failed" and "not paused" in second["reason"]


def test_retry_now_of_a_task_waiting_to_retry_is_unsupported():
    app = FakeApp({"t1": {**EXTENDED, "status": "RETRY"}})
    jobwatch = FakeJobwatch([command("c1", "retry", "t1"), command("c2", "retry", "t2")])
    CommandRunner(app, jobwatch, reported=lambda task_id: {"queue": "celery", "state": "retrying"} if task_id == "t2" else None).poll()
    assert [o["status"] for o in jobwatch.acks[0]["outcomes"]] == ["unsupported", "unsupported"]
    assert "ETA task in the memory of the worker" in jobwatch.acks[0]["outcomes"][0]["reason"] and app.sent == []


def test_an_outcomes_reason_and_details_stay_within_what_jobwatch_takes():
    from jobwatch_celery.outcome import Outcome

    body = Outcome("c1", "done", "x" * 5000, {f"k{i}" + "y" * 100: "z" * 500 for i in range(20)}).to_json()
    assert len(body["reason"]) == 1000 and body["reason"].endswith("…[truncated]")
    assert len(body["details"]) == 16 and all(len(k) <= 64 and len(v) <= 200 for k, v in body["details"].items())
