"""Names of tasks whose task-sent/task-received the agent never saw (it started after them).

Only those events name a task. Sending such a task's later events under `unknown` would
overwrite the name jobwatch already has (the newest event's name wins), so the agent
asks Celery first: the result backend (with `result_extended`, for finished tasks) and
the workers (`inspect().query_task`, for tasks they still hold).
"""
from __future__ import annotations

import logging
from typing import Dict, List

from celery import Celery
from celery.backends.base import DisabledBackend

log = logging.getLogger("jobwatch_celery.names")
LOOKUPS_MAX = 100
INSPECT_TIMEOUT_S = 1.0  # 0.5 s missed replies on a busy 2-core machine


def lookup_names(app: Celery, task_ids: List[str]) -> Dict[str, str]:
    task_ids = task_ids[:LOOKUPS_MAX]
    names: Dict[str, str] = {}
    try:
        if not isinstance(app.backend, DisabledBackend):
            for task_id in task_ids:
                name = app.backend.get_task_meta(task_id).get("name")
                if isinstance(name, str) and name:
                    names[task_id] = name
        missing = [task_id for task_id in task_ids if task_id not in names]
        if missing:
            replies = app.control.inspect(timeout=INSPECT_TIMEOUT_S).query_task(*missing) or {}
            for tasks in replies.values():
                for task_id, entry in (tasks or {}).items():
                    info = entry[1] if isinstance(entry, (list, tuple)) and len(entry) == 2 else {}
                    name = info.get("name") or info.get("type") if isinstance(info, dict) else None
                    if isinstance(name, str) and name:
                        names[task_id] = name
    except Exception as error:  # the broker or backend is away: the events go out as `unknown`
        log.warning("could not ask Celery for %d task names (%s: %s)", len(task_ids), type(error).__name__, error)
    return names
