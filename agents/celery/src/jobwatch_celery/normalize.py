"""Celery's native events -> jobwatch ingest events, following the state mapping of
docs/api.md and this agent's README.

Native states map as: PENDING -> unknown, SENT/RECEIVED -> queued (scheduled when the
ETA is still in the future), STARTED -> active, SUCCESS -> completed, FAILURE -> failed,
RETRY -> retrying, REVOKED/REJECTED -> cancelled. Only task-sent and task-received name
the task; an event for a task whose name is not yet known is held for a short while,
because events from the producer and the worker can arrive out of order. The arguments
task-sent and task-received carry, and the result task-succeeded carries, go with their
events (task_values.py reads, masks and bounds them).
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Tuple

from . import limits
from .bound_json import bound_json
from .limits import cut_marked, epoch_from_iso, iso_from_epoch
from .task_facts import TaskFacts
from .task_values import TaskValues

TASK_STATES = {
    "task-sent": "queued",
    "task-received": "queued",
    "task-started": "active",
    "task-succeeded": "completed",
    "task-failed": "failed",
    "task-retried": "retrying",
    "task-revoked": "cancelled",
    "task-rejected": "cancelled",
}
FINISHED = {"completed", "failed", "cancelled"}
RUN_STATES = {"active", "retrying"} | FINISHED
UNKNOWN_NAME = "unknown"

# Worker-side events name the worker in `hostname`; task-sent names the producer.
FROM_WORKER = {"task-received", "task-started", "task-succeeded", "task-failed", "task-retried", "task-revoked", "task-rejected"}
WORKER_METADATA_KEYS = ("sw_ident", "sw_ver", "sw_sys", "freq", "loadavg", "processed")
# Celery heartbeats every 2 s; jobwatch calls a worker offline after 6 s of silence. An
# unchanged heartbeat less than 3 s after the last one sent is skipped: every other one
# goes, which halves the events counted against the daily quota and stays well inside 6 s.
HEARTBEAT_RESEND_S = 3.0
WORKERS_TRACKED_MAX = 10_000


class WorkerInfo:
    """Queues and pool size per worker hostname, learned by the queue monitor from `inspect`."""

    def __init__(self) -> None:
        self.queues: Dict[str, List[str]] = {}
        self.concurrency: Dict[str, int] = {}


class Normalizer:
    def __init__(
        self,
        connection_id: str,
        facts: Optional[TaskFacts] = None,
        worker_info: Optional[WorkerInfo] = None,
        name_wait_s: float = 2.0,
        held_max: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        values: Optional[TaskValues] = None,
    ) -> None:
        self.connection_id = connection_id
        self.values = values if values is not None else TaskValues()
        self.facts = facts if facts is not None else TaskFacts()
        self.worker_info = worker_info if worker_info is not None else WorkerInfo()
        self.name_wait_s = name_wait_s
        self.held_max = held_max
        self.clock = clock
        # task id -> [(held since, native event)], oldest task first
        self._held: "OrderedDict[str, List[Tuple[float, dict]]]" = OrderedDict()
        self._held_count = 0
        self.queues_seen: Dict[str, None] = {}
        self.ignored = 0
        self.sent_unnamed = 0
        self.heartbeats_skipped = 0
        # hostname -> (timestamp, state, active) of the last worker event sent
        self._last_worker_sent: "OrderedDict[str, Tuple[float, str, Optional[int]]]" = OrderedDict()

    def normalize(self, event: dict) -> List[dict]:
        """The ingest events for one native event (none, one, or held ones released with it)."""
        kind = event.get("type", "")
        if kind.startswith("worker-"):
            built = self._worker_event(event)
            return [] if built is None else [built]
        if kind not in TASK_STATES or not event.get("uuid"):
            self.ignored += 1
            return []
        task_id = str(event["uuid"])
        if kind == "task-sent":
            event = self._sent_before_the_worker(task_id, event)
        self._learn(task_id, event)
        if self.facts.name_of(task_id) is None:
            self._hold(task_id, event)
            return []
        released = [self._job_event(held, task_id) for _, held in self._release(task_id)]
        return released + [self._job_event(event, task_id)]

    def overdue(self) -> List[str]:
        """Ids of held tasks whose name did not arrive in time (oldest first): worth asking Celery."""
        ids: List[str] = []
        now = self.clock()
        count = self._held_count
        for task_id, events in self._held.items():
            if now - events[0][0] < self.name_wait_s and count <= self.held_max:
                break
            ids.append(task_id)
            count -= len(events)
        return ids

    def release_overdue(self, names: Optional[Dict[str, str]] = None) -> List[dict]:
        """Held events whose name never arrived go out, under the name Celery gave when asked, else `unknown`."""
        out: List[dict] = []
        for task_id in self.overdue():
            name = (names or {}).get(task_id)
            if name:
                self.facts.learn(task_id, name=name)
            for _, held in self._release(task_id):
                out.append(self._job_event(held, task_id))
                if not name:
                    self.sent_unnamed += 1
        return out

    @property
    def held(self) -> int:
        return self._held_count

    def _hold(self, task_id: str, event: dict) -> None:
        self._held.setdefault(task_id, []).append((self.clock(), event))
        self._held_count += 1

    def _release(self, task_id: str) -> List[Tuple[float, dict]]:
        events = self._held.pop(task_id, [])
        self._held_count -= len(events)
        return events

    def _sent_before_the_worker(self, task_id: str, event: dict) -> dict:
        """task-sent, timed no later than the first thing a worker reported about the task.

        The producer stamps task-sent after it published the message, so on a busy machine
        a worker can receive and start the task first; taken as is, the job's history would
        read queued, active, queued, completed.
        """
        known = self.facts.get(task_id)
        retries = event.get("retries") if isinstance(event.get("retries"), int) else 0
        first_worker_at = known.get("first_worker_at")
        # Only against the same attempt: a retry re-sends the task, and that send comes after the first run.
        if known.get("first_worker_retries") == retries and isinstance(first_worker_at, float) and _timestamp(event) >= first_worker_at:
            return {**event, "timestamp": first_worker_at - 0.001}
        return event

    def _learn(self, task_id: str, event: dict) -> None:
        kind = event["type"]
        timestamp = _timestamp(event)
        facts = {
            "name": event.get("name"),
            "queue": event.get("queue") or None,
            "retries": event.get("retries") if isinstance(event.get("retries"), int) else None,
            "eta": event.get("eta"),
            "expires": event.get("expires"),
            "root_id": event.get("root_id"),
            "parent_id": event.get("parent_id"),
            # a group's id, where an event carries one (Celery 5.2's task events do not; a patched sender may)
            "group_id": event.get("group_id") or event.get("group"),
            # the state of the last event received (events can cross: a command reads it as a hint only)
            "state": TASK_STATES[kind],
        }
        if kind == "task-sent" and (not facts["retries"] or "sent_at" not in self.facts.get(task_id)):
            facts["sent_at"] = timestamp  # the first dispatch: a retry's re-send does not move createdAt
        if kind == "task-received":
            # A new delivery (first run or a retry): the previous run's start no longer applies.
            self.facts.get(task_id).pop("started_at", None)
        if kind == "task-started":
            facts["started_at"] = timestamp
            # the run now starting is the attempt last received: a retry it raises is that attempt's
            facts["run_retries"] = self.facts.get(task_id).get("retries", 0)
        if kind in FROM_WORKER and event.get("hostname"):
            facts["worker"] = event["hostname"]
        known = self.facts.learn(task_id, **facts)
        if kind in FROM_WORKER:
            attempt_retries = known.get("retries", 0)
            if known.get("first_worker_retries") != attempt_retries:
                known["first_worker_retries"] = attempt_retries
                known["first_worker_at"] = timestamp
        queue = known.get("queue")
        if isinstance(queue, str):
            self.queues_seen[queue] = None

    def _job_event(self, event: dict, task_id: str) -> dict:
        facts = self.facts.get(task_id)
        kind = event["type"]
        timestamp = _timestamp(event)
        state = TASK_STATES[kind]
        eta_s = epoch_from_iso(facts.get("eta"))
        if state == "queued" and eta_s is not None and eta_s > timestamp:
            state = "scheduled"
        job: Dict[str, object] = {
            "externalId": cut_marked(task_id, limits.EXTERNAL_ID_CHARS),
            "name": cut_marked(str(facts.get("name") or UNKNOWN_NAME), limits.NAME_CHARS),
            "state": state,
        }
        if isinstance(facts.get("queue"), str):
            job["queue"] = cut_marked(facts["queue"], limits.QUEUE_CHARS)
        if kind in FROM_WORKER and isinstance(facts.get("worker"), str):
            job["workerId"] = cut_marked(facts["worker"], limits.WORKER_ID_CHARS)
        retries = facts.get("retries")
        if kind == "task-retried" and isinstance(facts.get("run_retries"), int):
            # the retry's message (task-sent, task-received with retries + 1) can arrive first
            retries = facts["run_retries"]
        if isinstance(retries, int) and retries >= 0:
            job["attempt"] = retries + 1
        if kind in ("task-sent", "task-received") and self.values.sends_args_of(facts.get("name")):
            args = self.values.args_from_event(event)
            if args is not None:
                job["args"] = args
        if kind == "task-succeeded":
            result = self.values.result_from_event(event)
            if result is not None:
                job["result"] = result
        if kind in ("task-failed", "task-retried"):
            job["error"] = cut_marked(str(event.get("exception") or ""), limits.ERROR_CHARS)
            if event.get("traceback"):
                job["stacktrace"] = cut_marked(str(event["traceback"]), limits.STACKTRACE_CHARS)
        if isinstance(facts.get("sent_at"), float):
            job["createdAt"] = iso_from_epoch(facts["sent_at"])
        started_at = facts.get("started_at")
        runtime = event.get("runtime") if isinstance(event.get("runtime"), (int, float)) else None
        if started_at is None and runtime is not None and state in FINISHED:
            started_at = timestamp - runtime  # the agent missed task-started: Celery's runtime says when
        if state in RUN_STATES and isinstance(started_at, float):
            job["startedAt"] = iso_from_epoch(started_at)
        if state in FINISHED:
            job["completedAt"] = iso_from_epoch(timestamp)
        job.update(_relations(facts, task_id))
        job["extensions"] = _task_extensions(facts, event, runtime)
        return self._envelope("job_state_change", timestamp, "job", job)

    def _worker_event(self, event: dict) -> Optional[dict]:
        hostname = event.get("hostname")
        kind = event["type"]
        if not hostname or kind not in ("worker-online", "worker-heartbeat", "worker-offline"):
            self.ignored += 1
            return None
        active = event.get("active") if isinstance(event.get("active"), int) else None
        if kind == "worker-online":
            state = "online"
        elif kind == "worker-offline":
            state, active = "offline", 0
        else:
            # A heartbeat says how many tasks run now: busy or idle is the useful state.
            state = "heartbeat" if active is None else ("busy" if active > 0 else "idle")
        timestamp = _timestamp(event)
        if self._same_heartbeat_as_last(hostname, kind, timestamp, state, active):
            self.heartbeats_skipped += 1
            return None
        worker: Dict[str, object] = {
            "externalId": cut_marked(str(hostname), limits.EXTERNAL_ID_CHARS),
            "hostname": cut_marked(str(hostname), limits.HOSTNAME_CHARS),
            "state": state,
        }
        if isinstance(event.get("pid"), int) and 0 <= event["pid"] <= 2**32:
            worker["pid"] = event["pid"]
        if active is not None and active >= 0:
            worker["activeJobs"] = active
        queues = self.worker_info.queues.get(hostname)
        if queues is not None:
            worker["queues"] = [cut_marked(str(q), limits.QUEUE_CHARS) for q in queues[: limits.QUEUES_PER_WORKER_MAX]]
        concurrency = self.worker_info.concurrency.get(hostname)
        if concurrency is not None:
            worker["concurrency"] = concurrency
        # what a worker says of itself (software, load) is bounded like any value from Celery
        worker["metadata"] = bound_json({key: event[key] for key in WORKER_METADATA_KEYS if event.get(key) is not None})
        return self._envelope("worker_state_change", timestamp, "worker", worker)

    def _same_heartbeat_as_last(self, hostname: str, kind: str, timestamp: float, state: str, active: Optional[int]) -> bool:
        last = self._last_worker_sent.get(hostname)
        if kind == "worker-heartbeat" and last is not None and last[1:] == (state, active) and 0 <= timestamp - last[0] < HEARTBEAT_RESEND_S:
            return True
        self._last_worker_sent[hostname] = (timestamp, state, active)
        self._last_worker_sent.move_to_end(hostname)
        while len(self._last_worker_sent) > WORKERS_TRACKED_MAX:
            self._last_worker_sent.popitem(last=False)
        return False

    def _envelope(self, kind: str, timestamp: float, payload_key: str, payload: dict) -> dict:
        return {
            "type": kind,
            "timestamp": iso_from_epoch(timestamp),
            "framework": "celery",
            "connectionId": self.connection_id,
            payload_key: payload,
        }


def _timestamp(event: dict) -> float:
    for key in ("timestamp", "local_received"):
        value = event.get(key)
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    return time.time()


def _relations(facts: dict, task_id: str) -> Dict[str, str]:
    """The task's parent and root as Celery's events name them (a chain's previous task, a canvas's first).

    Only ids that are strings: a producer can send anything as a root id (it stays in
    extensions, bounded). A task that is its own root names none; cut like the task's own
    id, so a cut parent id still names the task whose id was cut the same way.
    """
    relations: Dict[str, str] = {}
    for fact, key in (("parent_id", "parentExternalId"), ("root_id", "rootExternalId")):
        value = facts.get(fact)
        if isinstance(value, str) and value and value != task_id:
            relations[key] = cut_marked(value, limits.EXTERNAL_ID_CHARS)
    return relations


def _task_extensions(facts: dict, event: dict, runtime: Optional[float]) -> dict:
    """What Celery says of a task beyond the common model; bounded: a producer can put anything in a root id or an ETA."""
    extensions: Dict[str, object] = {}
    for fact, key in (("eta", "eta"), ("expires", "expires"), ("root_id", "rootId"), ("parent_id", "parentId"), ("group_id", "groupId"), ("retries", "retries")):
        if facts.get(fact) is not None:
            extensions[key] = facts[fact]
    if runtime is not None:
        extensions["runtime"] = runtime
    for key in ("terminated", "signum", "expired", "requeue"):
        if event.get(key) is not None:
            extensions[key] = event[key]
    return bound_json(extensions)
