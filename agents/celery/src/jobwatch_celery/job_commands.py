"""Commands on one task: revoke, retry and delete, and why Celery cannot promote or kill one.

A command names its task by what jobwatch was sent, and anyone holding the connection's
API key can send jobwatch anything. So a task is acted on only when the agent reported it
itself or Celery knows it (its result backend has a record, a worker holds it, or its
message waits in its queue): workers keep revoked ids, so a forged id must not revoke a
task sent later under it. A retry is re-sent with the name, arguments and queue Celery and
the agent know, never a name or queue only the command says.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Callable, Collection, Dict, List, Optional, Tuple

from celery import Celery, states
from celery.backends.base import DisabledBackend
from kombu.exceptions import OperationalError

from .capabilities import RETRY_NOW_REASON
from .outcome import Outcome, done, failed, not_found, unsupported
from .queue_messages import waits_in_queue
from .remote_control import BrokerUnavailable, RemoteControl

FINISHED_STATES = {"completed", "failed", "cancelled"}


@dataclass
class TaskWhereabouts:
    """Where Celery has a task now."""

    meta: Optional[dict] = None  # the result backend's record (None: no backend, or no record)
    held: Dict[str, str] = field(default_factory=dict)  # worker -> active, reserved or scheduled
    workers: List[str] = field(default_factory=list)  # every worker that answered
    in_queue: Optional[bool] = None  # its message waits in its queue (None: cannot tell)

    @property
    def finished_in_backend(self) -> bool:
        return self.meta is not None and self.meta.get("status") in states.READY_STATES


class JobCommands:
    def __init__(
        self,
        app: Celery,
        remote: RemoteControl,
        revoke_signal: str,
        reported: Callable[[str], Optional[dict]],
        watched_queues: Callable[[], Collection[str]],
    ) -> None:
        self.app = app
        self.remote = remote
        self.revoke_signal = revoke_signal
        self.reported = reported
        self.watched_queues = watched_queues

    # -- revoke: stop the task wherever it is, terminating it if it runs

    def revoke(self, command_id: str, command: dict) -> Outcome:
        task_id = command["externalId"]
        if self.reported(task_id) is None and not self._celery_knows(task_id):
            return failed(command_id, "not a task this agent reported, and Celery knows no task of that id "
                          "(the result backend has no record of it and no worker holds it): nothing was revoked")
        try:
            self.app.control.revoke(task_id, terminate=True, signal=self.revoke_signal)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        return done(command_id)

    def _celery_knows(self, task_id: str) -> bool:
        """Whether the result backend has a record of the task or a worker holds it now."""
        if self._backend_record(task_id) is not None:
            return True
        replies = self.remote.ask("query_task", None, task_id)
        return any(isinstance(tasks, dict) and task_id in tasks for tasks in replies.values())

    def _backend_record(self, task_id: str) -> Optional[dict]:
        if isinstance(self.app.backend, DisabledBackend):
            return None
        try:
            meta = self.app.backend.get_task_meta(task_id)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(f"result backend: {error}") from error
        if meta.get("status") == states.PENDING and meta.get("name") is None:
            return None
        return meta

    # -- retry: send the task again with its own name, arguments and queue

    def retry(self, command_id: str, command: dict) -> Outcome:
        task_id = command["externalId"]
        if isinstance(self.app.backend, DisabledBackend):
            return failed(command_id, "not retried: the agent has no result backend to read the task's arguments from "
                          "(start it with --result-backend, the same URL as the Celery app's, with result_extended=True)")
        meta = self._backend_record(task_id)
        if meta is None:
            if (self.reported(task_id) or {}).get("state") == "retrying":
                return unsupported(command_id, RETRY_NOW_REASON)
            return failed(command_id, "not retried: the result backend has no record of this task "
                          "(its result expired, was never stored, or the task was revoked before it ran)")
        if meta.get("status") == states.RETRY:
            return unsupported(command_id, RETRY_NOW_REASON)
        args, kwargs = meta.get("args"), meta.get("kwargs")
        if args is None or kwargs is None:
            return failed(command_id, "not retried: the task's arguments are not in the result backend; "
                          "set result_extended=True in the Celery app so a retry can re-send them")
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            return failed(command_id, "not retried: the result backend does not name the task")
        queue, problem = self._queue_of(task_id, command)
        if problem is not None:
            return failed(command_id, f"not retried: {problem}")
        if queue is None:
            queue = meta.get("queue")
        # Workers remember revoked ids and would discard the task at once under the same id.
        revoked = meta.get("status") == states.REVOKED
        new_id = str(uuid.uuid4()) if revoked else task_id
        retries = meta.get("retries") if isinstance(meta.get("retries"), int) else 0
        try:
            self.app.send_task(name, args=list(args), kwargs=dict(kwargs), queue=queue, task_id=new_id, retries=retries + 1)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        if revoked:
            return done(command_id, f"re-sent as new task {new_id}: Celery workers discard a revoked task id")
        return done(command_id)

    def _queue_of(self, task_id: str, command: dict) -> Tuple[Optional[str], Optional[str]]:
        """(queue, None) or (None, why not): the queue the agent reported for the task (task-sent names
        it), else the one the command names if the agent knows it, else (None, None): the backend's
        routing key then, the queue's name under Celery's default routing."""
        queue = (self.reported(task_id) or {}).get("queue")
        if isinstance(queue, str):
            return queue, None
        named = command.get("queue")
        if isinstance(named, str) and named:
            if named not in self.watched_queues():
                return None, f"queue {named[:300]!r} is not a queue this agent watches (none of its events, workers or --queues names it)"
            return named, None
        return None, None

    # -- delete: a waiting task is revoked (not terminated); a finished one's result is forgotten

    def delete(self, command_id: str, command: dict) -> Outcome:
        task_id = command["externalId"]
        where = self._find(task_id, command)
        if where.finished_in_backend:
            return self._forget(command_id, task_id, where.meta)
        if "active" in where.held.values():
            return failed(command_id, "the task is running: delete does not stop a running task (revoke terminates it)")
        reported = self.reported(task_id)
        if reported is not None and reported.get("state") in FINISHED_STATES and where.meta is None and not where.held:
            if isinstance(self.app.backend, DisabledBackend):
                return failed(command_id, "the task has finished: what Celery keeps of it is its result, in the app's result backend, "
                              "which this agent was not given (--result-backend)")
            return not_found(command_id, "the task has finished and Celery keeps nothing of it to delete "
                             "(no result in the result backend)")
        waiting = bool(where.held) or where.in_queue is True or where.meta is not None or (where.in_queue is None and reported is not None)
        if not waiting:
            return not_found(command_id, "Celery has no such task waiting: no worker holds it, its queue does not hold it "
                             "and the result backend has no record of it")
        if not where.workers:
            return failed(command_id, "no worker answered: nothing was revoked (Celery keeps revoked ids in the workers, "
                          "so the task would run when a worker takes it)")
        replies = self.remote.command("revoke", {"task_id": task_id, "terminate": False, "signal": None}, where.workers)
        problem = replies.problem(self.remote.reply_timeout_s)
        if problem is not None:
            return failed(command_id, f"revoke not confirmed: {problem}")
        return done(command_id, "revoked: a worker discards the task when it would run it (it shows cancelled then)",
                    workers=len(replies.ok))

    def _find(self, task_id: str, command: dict) -> TaskWhereabouts:
        where = TaskWhereabouts(meta=self._backend_record(task_id))
        if where.finished_in_backend:
            return where
        answers = self.remote.ask("query_task", None, task_id)
        for host, tasks in answers.items():
            found = tasks.get(task_id) if isinstance(tasks, dict) else None
            if isinstance(found, (list, tuple)) and found:
                where.held[host] = str(found[0])
        # a task with an ETA or countdown waits in its worker's timer, unknown to query_task
        scheduled = self.remote.ask("scheduled", None)
        for host, entries in scheduled.items():
            for entry in entries if isinstance(entries, list) else ():
                request = entry.get("request") if isinstance(entry, dict) else None
                if isinstance(request, dict) and request.get("id") == task_id:
                    where.held[host] = "scheduled"
        where.workers = sorted(set(answers) | set(scheduled))
        queue, _ = self._queue_of(task_id, command)
        if queue is None and where.meta is not None and isinstance(where.meta.get("queue"), str):
            queue = where.meta["queue"]
        if queue is not None and not where.held:
            try:
                where.in_queue = waits_in_queue(self.app, queue, task_id)
            except (OperationalError, OSError) as error:
                raise BrokerUnavailable(error) from error
        return where

    def _forget(self, command_id: str, task_id: str, meta: dict) -> Outcome:
        try:
            self.app.backend.forget(task_id)
        except NotImplementedError:
            return failed(command_id, f"the task has finished ({meta.get('status')}) and this result backend cannot forget results: "
                          "Celery keeps nothing else of it to delete")
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(f"result backend: {error}") from error
        return done(command_id, f"the task had finished ({meta.get('status')}): its result was removed from the result backend "
                    "(a finished task has nothing left to revoke)", forgotten=True)
