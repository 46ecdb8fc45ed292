"""Commands: acknowledged only after Celery accepted them; a retry without arguments is reported, not guessed."""
from types import SimpleNamespace

from kombu.exceptions import OperationalError

from jobwatch_celery.commands import CommandRunner
from jobwatch_celery.http_client import NetworkError, Response


class FakeBackend:
    def __init__(self, metas):
        self.metas = metas

    def get_task_meta(self, task_id):
        return self.metas.get(task_id, {"status": "PENDING", "result": None})


class FakeApp:
    def __init__(self, metas=None, broker_down=False):
        self.revoked, self.sent = [], []
        self.broker_down = broker_down
        self.backend = FakeBackend(metas or {})
        self.control = SimpleNamespace(revoke=self._revoke)

    def _revoke(self, task_id, terminate, signal):
        if self.broker_down:
            raise OperationalError("broker down")
        self.revoked.append((task_id, terminate, signal))

    def send_task(self, name, **options):
        if self.broker_down:
            raise OperationalError("broker down")
        self.sent.append((name, options))


class FakeJobwatch:
    def __init__(self, commands, ack_fails=False):
        self.commands = commands
        self.acks = []
        self.ack_fails = ack_fails

    def get(self, path):
        assert path.startswith("/api/agent/commands")
        return Response(200, {"data": self.commands}, None)

    def post(self, path, body):
        assert path == "/api/agent/commands/ack"
        if self.ack_fails:
            raise NetworkError("down")
        self.acks.append(body)
        acked = {o["id"] for o in body["outcomes"]}
        self.commands = [c for c in self.commands if c["id"] not in acked]
        return Response(200, {"acked": len(acked)}, None)


def command(cid, kind, task_id, name="app.add", queue="celery"):
    return {"id": cid, "type": kind, "jobId": "j" + cid, "externalId": task_id, "name": name, "queue": queue, "createdAt": "2026-11-21T10:00:00.000Z"}


EXTENDED = {"status": "FAILURE", "name": "app.add", "args": [1, 2], "kwargs": {"z": 3}, "queue": "math", "retries": 0}


def test_revoke_terminates_with_the_configured_signal_and_is_acked_done():
    app, jobwatch = FakeApp(), FakeJobwatch([command("c1", "revoke", "t1")])
    assert CommandRunner(app, jobwatch, "SIGKILL").poll() == 1
    assert app.revoked == [("t1", True, "SIGKILL")]
    assert jobwatch.acks == [{"outcomes": [{"id": "c1", "status": "done"}]}]


def test_retry_resends_with_the_original_name_args_kwargs_and_queue_under_the_same_id():
    app, jobwatch = FakeApp({"t1": EXTENDED}), FakeJobwatch([command("c1", "retry", "t1", queue="math")])
    CommandRunner(app, jobwatch).poll()
    assert app.sent == [("app.add", {"args": [1, 2], "kwargs": {"z": 3}, "queue": "math", "task_id": "t1", "retries": 1})]
    assert jobwatch.acks[0]["outcomes"] == [{"id": "c1", "status": "done"}]


def test_retry_takes_the_queue_from_the_backend_when_jobwatch_does_not_know_it():
    app = FakeApp({"t1": {**EXTENDED, "queue": "reports"}})
    CommandRunner(app, FakeJobwatch([command("c1", "retry", "t1", queue=None)])).poll()
    assert app.sent[0][1]["queue"] == "reports"


def test_retry_of_a_revoked_task_uses_a_new_id_and_says_so():
    app = FakeApp({"t1": {**EXTENDED, "status": "REVOKED"}})
    jobwatch = FakeJobwatch([command("c1", "retry", "t1")])
    CommandRunner(app, jobwatch).poll()
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
    runner = CommandRunner(app, jobwatch)
    assert runner.poll() == 0 and jobwatch.acks == []
    app.broker_down = False
    assert runner.poll() == 2
    assert [o["id"] for o in jobwatch.acks[0]["outcomes"]] == ["c1", "c2"]


def test_a_command_whose_ack_was_lost_is_acked_again_but_not_carried_out_twice():
    app, jobwatch = FakeApp({"t1": EXTENDED}), FakeJobwatch([command("c1", "retry", "t1")], ack_fails=True)
    runner = CommandRunner(app, jobwatch)
    assert runner.poll() == 0
    jobwatch.ack_fails = False
    assert runner.poll() == 1
    assert len(app.sent) == 1 and jobwatch.acks[0]["outcomes"] == [{"id": "c1", "status": "done"}]


def test_an_unknown_command_type_is_acked_failed():
    app, jobwatch = FakeApp(), FakeJobwatch([command("c1", "pause", "t1")])
    CommandRunner(app, jobwatch).poll()
    assert jobwatch.acks[0]["outcomes"][0]["status"] == "failed"


def test_acks_are_split_so_every_body_fits_the_services_128_kib_cap():
    import json

    from jobwatch_celery.commands import Outcome

    jobwatch = FakeJobwatch([command(f"c{i}", "retry", f"t{i}") for i in range(100)])
    runner = CommandRunner(FakeApp(), jobwatch)
    runner.execute = lambda c: Outcome(str(c["id"]), "failed", "\u00e9\u4e2d" * 600)  # escapes to 6 bytes a character
    assert runner.poll() == 100
    assert len(jobwatch.acks) > 1 and sum(len(body["outcomes"]) for body in jobwatch.acks) == 100
    assert max(len(json.dumps(body).encode()) for body in jobwatch.acks) <= 128 * 1024
