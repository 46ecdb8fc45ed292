"""Commands from jobwatch, carried out in Celery and acknowledged with an outcome.

The agent polls jobwatch for commands, checks what each names (`command_inputs`), carries
it out through the module of its target (a task, a queue, a worker, a task type) and
acknowledges `done`, `failed` with the reason ("not found: ..." when Celery has no such
thing) or `unsupported` with why Celery cannot (`capabilities`). A command is acknowledged
only after Celery accepted it; when the broker cannot be reached the command stays
unacknowledged and comes back at the next poll.
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Callable, Collection, Dict, List, Optional

from celery import Celery

from .capabilities import CONTROLS, CapabilityReport, unknown_type_reason
from .command_inputs import queue_problem, task_id_problem, task_name_problem, worker_problem
from .http_client import Client, NetworkError
from .job_commands import JobCommands
from .outcome import Outcome, failed, unsupported
from .paused_queues import PausedQueues
from .queue_controls import QueueControls
from .remote_control import BrokerUnavailable, RemoteControl
from .task_controls import TaskControls
from .worker_controls import WorkerControls

log = logging.getLogger("jobwatch_celery.commands")
COMMANDS_PER_POLL = 100
# The service caps an ack body at 128 KiB; a reason of 1,000 characters escapes to at
# most 6,000 bytes of JSON, so 20 outcomes always fit in one request.
ACK_OUTCOMES_PER_REQUEST = 20
UNACKED_OUTCOMES_MAX = 10_000

# what each command's target is named by, and the check that name passes before use
TARGET_FIELDS = {
    "job": ("externalId", task_id_problem),
    "queue": ("queue", queue_problem),
    "worker": ("workerId", worker_problem),
    "task": ("name", task_name_problem),
}


TARGET_WORDS = {"job": "task", "queue": "queue", "worker": "worker", "task": "task type"}


def target_of(kind: str) -> str:
    if kind.startswith("queue."):
        return "queue"
    if kind.startswith("worker."):
        return "worker"
    if kind.startswith("task."):
        return "task"
    return "job"


class CommandRunner:
    def __init__(
        self,
        app: Celery,
        client: Client,
        revoke_signal: str = "SIGTERM",
        reported: Callable[[str], Optional[dict]] = lambda task_id: None,
        watched_queues: Callable[[], Collection[str]] = lambda: (),
        *,
        paused: Optional[PausedQueues] = None,
        known_workers: Callable[[], Collection[str]] = lambda: (),
        offline_since: Callable[[str], Optional[float]] = lambda host: None,
        workers_changed: Callable[[], None] = lambda: None,
        remote: Optional[RemoteControl] = None,
    ) -> None:
        """`reported`: what the agent sent jobwatch about a task (None for a task it never reported);
        `watched_queues`: the queues the agent knows (from events, the workers and `--queues`);
        `paused`: the queues jobwatch paused (kept in memory only when None); `known_workers`,
        `offline_since`, `workers_changed`: see `WorkerControls`."""
        self.client = client
        self.remote = remote or RemoteControl(app)
        self.paused = paused if paused is not None else PausedQueues(None)
        self.jobs = JobCommands(app, self.remote, revoke_signal, reported, watched_queues)
        self.queues = QueueControls(app, self.remote, self.paused, watched_queues)
        self.workers = WorkerControls(self.remote, known_workers, offline_since, workers_changed)
        self.tasks = TaskControls(self.remote)
        self.capabilities = CapabilityReport(client)
        self.handlers: Dict[str, Callable[[str, dict], Outcome]] = {
            "revoke": self.jobs.revoke,
            "retry": self.jobs.retry,
            "delete": self.jobs.delete,
            "queue.pause": self.queues.pause,
            "queue.resume": self.queues.resume,
            "queue.clean": self.queues.clean,
            "task.rate_limit": self.tasks.rate_limit,
            "worker.quiet": self.workers.quiet,
            "worker.stop": self.workers.stop,
            "worker.pool": self.workers.pool,
        }
        self._unreachable = False
        # Carried out but not yet acknowledged (the ack failed): not carried out twice.
        self._unacked: "OrderedDict[str, Outcome]" = OrderedDict()

    def poll(self) -> int:
        """Fetches pending commands, carries them out, acknowledges; returns how many were acknowledged."""
        try:
            response = self.client.get(f"/api/agent/commands?limit={COMMANDS_PER_POLL}")
        except NetworkError as error:
            if not self._unreachable:
                log.warning("commands: jobwatch unreachable (%s); polling on", error)
                self._unreachable = True
            return 0
        if self._unreachable:
            self.capabilities.outage_over()  # a restarted or restored jobwatch hears them again
            self._unreachable = False
        self.capabilities.send_if_due()
        if response.status != 200:
            log.error("commands: jobwatch answered %d %s", response.status, response.error_text())
            return 0
        outcomes: List[Outcome] = []
        for command in response.body.get("data", []):
            outcome = self._unacked.get(str(command.get("id"))) or self.execute(command)
            if outcome is None:
                break  # the broker is down: keep order, the rest wait for the next poll
            outcomes.append(outcome)
            self._remember(outcome)
        if not outcomes:
            return 0
        acked = 0
        for start in range(0, len(outcomes), ACK_OUTCOMES_PER_REQUEST):
            chunk = outcomes[start:start + ACK_OUTCOMES_PER_REQUEST]
            try:
                ack = self.client.post("/api/agent/commands/ack", {"outcomes": [o.to_json() for o in chunk]})
            except NetworkError as error:
                log.warning("commands: ack of %d commands failed (%s); they will come back and be carried out again", len(outcomes) - acked, error)
                return acked
            if ack.status != 200:
                log.error("commands: ack refused: %d %s", ack.status, ack.error_text())
                return acked
            for outcome in chunk:
                self._unacked.pop(outcome.id, None)
            acked += len(chunk)
        return acked

    def _remember(self, outcome: Outcome) -> None:
        self._unacked[outcome.id] = outcome
        while len(self._unacked) > UNACKED_OUTCOMES_MAX:
            self._unacked.popitem(last=False)

    def execute(self, command: dict) -> Optional[Outcome]:
        """The outcome to acknowledge, or None when Celery could not accept the command now."""
        command_id = str(command.get("id"))
        kind = command.get("type")
        shown = describe(kind, command)
        try:
            outcome = self._carry_out(command_id, kind, command)
        except BrokerUnavailable as error:
            log.warning("commands: %s of %s not carried out now (broker: %s); will try again", kind, shown, error)
            return None
        except Exception as error:  # one command Celery choked on must not stop the others
            log.exception("commands: %s of %s failed", kind, shown)
            outcome = failed(command_id, f"the agent could not carry it out: {type(error).__name__}: {error}")
        log.info("commands: %s of %s -> %s%s", kind, shown, outcome.status, f" ({outcome.reason})" if outcome.reason else "")
        return outcome

    def _carry_out(self, command_id: str, kind: object, command: dict) -> Outcome:
        if not isinstance(kind, str) or kind not in CONTROLS:
            return unsupported(command_id, unknown_type_reason(kind))
        reason = CONTROLS[kind]
        if reason is not None:
            return unsupported(command_id, reason)
        field_name, check = TARGET_FIELDS[target_of(kind)]
        problem = check(command.get(field_name))
        if problem is not None:
            return failed(command_id, problem)
        return self.handlers[kind](command_id, command)


def describe(kind: object, command: dict) -> str:
    """What a command names, for its log line (the log escapes what it cannot print)."""
    if not isinstance(kind, str):
        return "?"
    target = target_of(kind)
    name = command.get(TARGET_FIELDS[target][0])
    return f"{TARGET_WORDS[target]} {str(name)[:300] if name is not None else '?'}"
