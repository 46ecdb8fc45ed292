"""A finished task's values as the result backend kept them, whole: task events carry the
arguments and result as reprs cut at Celery's `argsrepr_maxsize`, `kwargsrepr_maxsize` and
`resultrepr_maxsize` (1,024 characters each by default), the backend the values themselves
(the result always, the arguments with `result_extended = True`).

The worker stores the result before it sends task-succeeded or task-failed, so the agent
holds each such event back, reads the task's entry in the backend (a batch at a time, one
MGET on Redis, entries past VALUE_READ_BYTES_MAX left unread), fills in `result` and
`args` from it, and sends the event on; what it could not read goes out with the values
the events carried. Without `--result-backend` nothing is held.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Callable, Deque, Dict, List, Optional

from celery import Celery
from celery.backends.base import BaseKeyValueStoreBackend, DisabledBackend

from .task_values import TaskValues

log = logging.getLogger("jobwatch_celery.backend_values")
# Entries larger than this are not read: the event's own (cut) values go out instead.
VALUE_READ_BYTES_MAX = 4 * 1024 * 1024
READS_PER_BATCH = 200
# Past this many events waiting for a read, new ones go out as they are: a backend that
# answers slowly must not hold the agent's events, or its memory, without end.
HELD_MAX = 10_000
FINISHED = ("completed", "failed")


class BackendValues:
    def __init__(self, app: Celery, values: TaskValues, submit: Callable[[List[dict]], None], held_max: int = HELD_MAX) -> None:
        self.app = app
        self.values = values
        self.submit = submit
        self.held_max = held_max
        self.enabled = app.conf.result_backend is not None and not isinstance(app.backend, DisabledBackend)
        self._held: Deque[dict] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._failing = False
        self.read = 0
        self.sent_unread = 0

    def send(self, events: List[dict]) -> None:
        """Hands `events` on: a finished task's event after its backend entry was read, the others at once."""
        now: List[dict] = []
        with self._lock:
            for event in events:
                job = event.get("job") if event.get("type") == "job_state_change" else None
                if self.enabled and job is not None and job.get("state") in FINISHED and len(self._held) < self.held_max:
                    self._held.append(event)
                else:
                    now.append(event)
            if self._held:
                self._wake.set()
        if now:
            self.submit(now)

    def run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            self._wake.wait(0.5)
            self.read_held()

    def read_held(self) -> None:
        """Reads the backend for the events held now, then sends them, a batch at a time."""
        while True:
            with self._lock:
                batch = [self._held.popleft() for _ in range(min(READS_PER_BATCH, len(self._held)))]
                if not self._held:
                    self._wake.clear()
            if not batch:
                return
            try:
                metas = self._metas([event["job"]["externalId"] for event in batch])
                if self._failing:
                    log.info("the result backend answers again; finished tasks go out with their whole result and arguments")
                self._failing = False
            except Exception as error:  # the backend is away: the events go out with the values they carried
                if not self._failing:
                    log.warning("could not read %d finished tasks from the result backend (%s: %s); they go out with the values their events carried",
                                len(batch), type(error).__name__, error)
                self._failing = True
                metas = {}
            for event in batch:
                self._fill(event["job"], metas.get(event["job"]["externalId"]))
            self.submit(batch)

    def close(self) -> None:
        """At shutdown: one more read for what is held, then everything goes."""
        self.read_held()

    def _fill(self, job: dict, meta: Optional[dict]) -> None:
        if not isinstance(meta, dict):
            self.sent_unread += 1
            return
        self.read += 1
        if job["state"] == "completed" and meta.get("status") == "SUCCESS" and "result" in meta:
            job["result"] = self.values.value(meta["result"])
        has_args = meta.get("args") is not None or meta.get("kwargs") is not None  # result_extended
        if has_args and self.values.sends_args_of(job.get("name")):
            job["args"] = self.values.args(meta.get("args") if meta.get("args") is not None else [], meta.get("kwargs") if meta.get("kwargs") is not None else {})

    def _metas(self, task_ids: List[str]) -> Dict[str, dict]:
        backend = self.app.backend
        metas: Dict[str, dict] = {}
        if not isinstance(backend, BaseKeyValueStoreBackend):
            for task_id in task_ids:
                meta = backend.get_task_meta(task_id)
                if meta.get("status") != "PENDING":
                    metas[task_id] = meta
            return metas
        keys = [backend.get_key_for_task(task_id) for task_id in task_ids]
        sizes = _sizes(backend, keys)
        wanted = [(task_id, key) for task_id, key, size in zip(task_ids, keys, sizes) if size is None or 0 < size <= VALUE_READ_BYTES_MAX]
        if not wanted:
            return metas
        try:
            values = backend.mget([key for _, key in wanted])
        except NotImplementedError:
            values = [backend.get(key) for _, key in wanted]
        if hasattr(values, "items"):  # some backends answer by key (the cache backend), Redis in order
            values = [values.get(key) for _, key in wanted]
        for (task_id, _), value in zip(wanted, values):
            if value is None:
                continue
            try:
                meta = backend.decode(value)
            except Exception:  # an entry the agent cannot decode (another serializer): the event's values stand
                continue
            if isinstance(meta, dict):
                metas[task_id] = meta
        return metas


def _sizes(backend: BaseKeyValueStoreBackend, keys: List[bytes]) -> List[Optional[int]]:
    """Each entry's size where the backend can say it without reading it (Redis: STRLEN), else None."""
    client = getattr(backend, "client", None)
    if client is None or not hasattr(client, "pipeline"):
        return [None] * len(keys)
    pipeline = client.pipeline(transaction=False)
    for key in keys:
        pipeline.strlen(key)
    return [int(size) for size in pipeline.execute()]
