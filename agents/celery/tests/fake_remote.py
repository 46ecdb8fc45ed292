"""Celery's remote control as the command modules see it, with workers whose answers a unit test sets.

Only the agent's reading of answers is under test here; what the commands do to a real
worker is checked in test_e2e_controls.py.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from jobwatch_celery.remote_control import BrokerUnavailable, Replies


def declared(name: str, exchange: Optional[str] = None, routing_key: Optional[str] = None) -> dict:
    """A queue as `active_queues` describes it."""
    return {"name": name, "exchange": {"name": exchange or name, "type": "direct"}, "routing_key": routing_key or name}


class FakeWorker:
    def __init__(self, queues=(), pool=2, registered=(), answers=True, refuses: Optional[Dict[str, str]] = None, scheduled=(), holds=None):
        self.queues: List[dict] = [q if isinstance(q, dict) else declared(q) for q in queues]
        self.pool = pool
        self.registered = list(registered)
        self.answers = answers  # False: silent (offline, or too busy)
        self.refuses = refuses or {}  # command -> the error it answers
        self.scheduled = list(scheduled)  # task ids waiting for their ETA
        self.holds = dict(holds or {})  # task id -> active | reserved
        self.stopped = False


class FakeRemote:
    reply_timeout_s = 5.0

    def __init__(self, **workers: FakeWorker) -> None:
        # keyword names stand for hostnames: a1 -> "a1@host"
        self.workers = {f"{name}@host": worker for name, worker in workers.items()}
        self.sent: List[tuple] = []  # (command, arguments, hosts) of every command sent
        self.asked: List[str] = []
        self.broker_down = False

    def _up(self) -> None:
        if self.broker_down:
            raise BrokerUnavailable("broker down")

    def _answering(self, hosts=None) -> Dict[str, FakeWorker]:
        return {h: w for h, w in self.workers.items() if w.answers and not w.stopped and (hosts is None or h in hosts)}

    def command(self, name: str, arguments: dict, hosts) -> Replies:
        self._up()
        self.sent.append((name, arguments, list(hosts)))
        replies = Replies()
        for host in hosts:
            worker = self._answering().get(host)
            if worker is None:
                replies.silent.append(host)
            elif name in worker.refuses:
                replies.errors[host] = worker.refuses[name]
            else:
                replies.ok[host] = self._apply(worker, name, arguments)
        return replies

    def _apply(self, worker: FakeWorker, name: str, arguments: dict) -> str:
        if name == "cancel_consumer":
            worker.queues = [q for q in worker.queues if q["name"] != arguments["queue"]]
        elif name == "add_consumer":
            worker.queues.append(declared(arguments["queue"], arguments.get("exchange"), arguments.get("routing_key")))
        elif name == "pool_grow":
            worker.pool += arguments["n"]
        elif name == "pool_shrink":
            worker.pool -= arguments["n"]
        return "ok"

    def send(self, name: str, hosts) -> None:
        self._up()
        self.sent.append((name, {}, list(hosts)))
        if name == "shutdown":
            for worker in self._answering(hosts).values():
                worker.stopped = True

    def ask(self, method: str, hosts=None, *args) -> dict:
        self._up()
        self.asked.append(method)
        answering = self._answering(hosts)
        if method == "active_queues":
            return {h: list(w.queues) for h, w in answering.items()}
        if method == "stats":
            return {h: {"pool": {"max-concurrency": 2, "processes": list(range(w.pool))}} for h, w in answering.items()}
        if method == "registered":
            return {h: list(w.registered) for h, w in answering.items()}
        if method == "query_task":
            return {h: {t: [state, {"id": t}] for t, state in w.holds.items() if t in args} for h, w in answering.items()}
        if method == "scheduled":
            return {h: [{"eta": "later", "request": {"id": t}} for t in w.scheduled] for h, w in answering.items()}
        raise AssertionError(f"unexpected inspect {method}")

    def answering(self, hosts, timeout_s: float) -> List[str]:
        self._up()
        return list(self._answering(hosts))
