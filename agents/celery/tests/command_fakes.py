"""Celery's app and jobwatch's agent routes as the command runner sees them, for unit tests."""
from types import SimpleNamespace

from kombu.exceptions import OperationalError

from jobwatch_celery.http_client import NetworkError, Response


class FakeBackend:
    def __init__(self, metas):
        self.metas = metas

    def get_task_meta(self, task_id):
        return self.metas.get(task_id, {"status": "PENDING", "result": None})


class FakeApp:
    def __init__(self, metas=None, broker_down=False, held_by_workers=()):
        self.revoked, self.sent, self.queried = [], [], []
        self.broker_down = broker_down
        self.held = set(held_by_workers)
        self.backend = FakeBackend(metas or {})
        self.control = SimpleNamespace(revoke=self._revoke, inspect=self._inspect)

    def _inspect(self, timeout):
        def query_task(*ids):
            self.queried.extend(ids)
            if self.broker_down:
                raise OperationalError("broker down")
            return {"w1@host": {task_id: ["reserved", {"id": task_id}] for task_id in ids if task_id in self.held}}

        return SimpleNamespace(query_task=query_task)

    def _revoke(self, task_id, terminate, signal):
        if self.broker_down:
            raise OperationalError("broker down")
        self.revoked.append((task_id, terminate, signal))

    def send_task(self, name, **options):
        if self.broker_down:
            raise OperationalError("broker down")
        self.sent.append((name, options))


class FakeJobwatch:
    """jobwatch's agent routes as the agent sees them: pending commands, acks, capabilities."""

    def __init__(self, commands, ack_fails=False, down=False, capabilities_status=200):
        self.commands = commands
        self.acks = []
        self.capabilities = []
        self.ack_fails = ack_fails
        self.down = down
        self.capabilities_status = capabilities_status

    def get(self, path):
        assert path.startswith("/api/agent/commands")
        if self.down:
            raise NetworkError("connection refused")
        return Response(200, {"data": self.commands}, None)

    def put(self, path, body):
        assert path == "/api/agent/capabilities"
        if self.down:
            raise NetworkError("connection refused")
        self.capabilities.append(body)
        return Response(self.capabilities_status, {}, None)

    def post(self, path, body):
        assert path == "/api/agent/commands/ack"
        if self.ack_fails:
            raise NetworkError("down")
        self.acks.append(body)
        acked = {o["id"] for o in body["outcomes"]}
        self.commands = [c for c in self.commands if c["id"] not in acked]
        return Response(200, {"acked": len(acked)}, None)
