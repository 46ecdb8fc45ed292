"""Revoke and retry from jobwatch, carried out in Celery and acknowledged with an outcome.

A command is acknowledged only after Celery accepted it (the broker took the revoke
broadcast or the re-sent task). When the broker cannot be reached the command stays
unacknowledged and comes back at the next poll. A retry whose arguments cannot be
known is not guessed at: it is acknowledged as `failed` with the reason, which jobwatch
shows on the job.

A command names its task by what jobwatch was sent, and anyone holding the connection's
API key can send jobwatch anything. So a task id is checked before it is used, a task is
revoked only when the agent reported it itself or Celery knows it (its result backend has
a record, or a worker holds it: workers keep revoked ids, so a forged id must not revoke a
task sent later under it), and a retry is re-sent with the name, arguments and queue Celery
and the agent know, never a name or queue only the command says. Anything else is
acknowledged `failed` with the reason.
"""
from __future__ import annotations

import logging
import re
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Collection, List, Optional

from celery import Celery
from celery.backends.base import DisabledBackend
from kombu.exceptions import OperationalError

from .http_client import Client, NetworkError
from .limits import EXTERNAL_ID_CHARS, TRUNCATED_MARK, utf16_units

log = logging.getLogger("jobwatch_celery.commands")
COMMANDS_PER_POLL = 100
REASON_CHARS = 1000
# The service caps an ack body at 128 KiB; a reason of 1,000 characters escapes to at
# most 6,000 bytes of JSON, so 20 outcomes always fit in one request.
ACK_OUTCOMES_PER_REQUEST = 20
UNACKED_OUTCOMES_MAX = 10_000
INSPECT_TIMEOUT_S = 1.0
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


@dataclass
class Outcome:
    id: str
    status: str  # "done" | "failed"
    reason: Optional[str] = None

    def to_json(self) -> dict:
        body = {"id": self.id, "status": self.status}
        if self.reason is not None:
            body["reason"] = self.reason[:REASON_CHARS]
        return body


class BrokerUnavailable(Exception):
    """Celery could not hand the command to the broker: try again at the next poll."""


def task_id_problem(task_id: object) -> Optional[str]:
    """Why a command's externalId is no Celery task id the agent can act on, or None."""
    if not isinstance(task_id, str) or task_id == "" or utf16_units(task_id) > EXTERNAL_ID_CHARS or _CONTROL.search(task_id):
        return f"not a Celery task id: {str(task_id)[:200]!r}"
    if utf16_units(task_id) == EXTERNAL_ID_CHARS and task_id.endswith(TRUNCATED_MARK):
        return f"the task's id was cut to {EXTERNAL_ID_CHARS} characters when it was sent to jobwatch: the agent cannot tell which task it is"
    return None


class CommandRunner:
    def __init__(
        self,
        app: Celery,
        client: Client,
        revoke_signal: str = "SIGTERM",
        reported: Callable[[str], Optional[dict]] = lambda task_id: None,
        watched_queues: Callable[[], Collection[str]] = lambda: (),
    ) -> None:
        """`reported`: what the agent sent jobwatch about a task (None for a task it never reported);
        `watched_queues`: the queues the agent knows (from events, the workers and `--queues`)."""
        self.app = app
        self.client = client
        self.revoke_signal = revoke_signal
        self.reported = reported
        self.watched_queues = watched_queues
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
        self._unreachable = False
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
        task_id = command.get("externalId")
        problem = task_id_problem(task_id)
        try:
            if problem is not None:
                outcome = Outcome(command_id, "failed", problem)
            elif kind == "revoke":
                outcome = self._revoke(command_id, task_id)
            elif kind == "retry":
                outcome = self._retry(command_id, command)
            else:
                outcome = Outcome(command_id, "failed", f"this agent does not know command type {kind!r}")
        except BrokerUnavailable as error:
            log.warning("commands: %s of task %s not carried out now (broker: %s); will try again", kind, task_id, error)
            return None
        log.info("commands: %s of task %s -> %s%s", kind, task_id, outcome.status, f" ({outcome.reason})" if outcome.reason else "")
        return outcome

    def _revoke(self, command_id: str, task_id: str) -> Outcome:
        if self.reported(task_id) is None and not self._celery_knows(task_id):
            return Outcome(command_id, "failed", "not a task this agent reported, and Celery knows no task of that id "
                           "(the result backend has no record of it and no worker holds it): nothing was revoked")
        try:
            self.app.control.revoke(task_id, terminate=True, signal=self.revoke_signal)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        return Outcome(command_id, "done")

    def _celery_knows(self, task_id: str) -> bool:
        """Whether the result backend has a record of the task or a worker holds it now."""
        try:
            if not isinstance(self.app.backend, DisabledBackend):
                meta = self.app.backend.get_task_meta(task_id)
                if meta.get("status") != "PENDING" or meta.get("name") is not None:
                    return True
            replies = self.app.control.inspect(timeout=INSPECT_TIMEOUT_S).query_task(task_id) or {}
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        return any(isinstance(tasks, dict) and task_id in tasks for tasks in replies.values())

    def _retry(self, command_id: str, command: dict) -> Outcome:
        task_id = command.get("externalId")
        if isinstance(self.app.backend, DisabledBackend):
            return Outcome(command_id, "failed", "not retried: the agent has no result backend to read the task's arguments from "
                           "(start it with --result-backend, the same URL as the Celery app's, with result_extended=True)")
        try:
            meta = self.app.backend.get_task_meta(task_id)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(f"result backend: {error}") from error
        if meta.get("status") == "PENDING" and meta.get("name") is None:
            return Outcome(command_id, "failed", "not retried: the result backend has no record of this task "
                           "(its result expired, was never stored, or the task was revoked before it ran)")
        args, kwargs = meta.get("args"), meta.get("kwargs")
        if args is None or kwargs is None:
            return Outcome(command_id, "failed", "not retried: the task's arguments are not in the result backend; "
                           "set result_extended=True in the Celery app so a retry can re-send them")
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            return Outcome(command_id, "failed", "not retried: the result backend does not name the task")
        # The queue the agent reported (task-sent names the queue), else the one the command
        # names if the agent knows it, else the backend's routing key, which is the queue's
        # name under Celery's default routing.
        queue = (self.reported(task_id) or {}).get("queue")
        named = command.get("queue")
        if not isinstance(queue, str) and isinstance(named, str) and named:
            if named not in self.watched_queues():
                return Outcome(command_id, "failed", f"not retried: queue {named[:300]!r} is not a queue this agent watches "
                               "(none of its events, workers or --queues names it)")
            queue = named
        if not isinstance(queue, str):
            queue = meta.get("queue")
        # Workers remember revoked ids and would discard the task at once under the same id.
        revoked = meta.get("status") == "REVOKED"
        new_id = str(uuid.uuid4()) if revoked else task_id
        retries = meta.get("retries") if isinstance(meta.get("retries"), int) else 0
        try:
            self.app.send_task(name, args=list(args), kwargs=dict(kwargs), queue=queue, task_id=new_id, retries=retries + 1)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        if revoked:
            return Outcome(command_id, "done", f"re-sent as new task {new_id}: Celery workers discard a revoked task id")
        return Outcome(command_id, "done")
