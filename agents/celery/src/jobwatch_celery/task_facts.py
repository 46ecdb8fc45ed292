"""What some task events carry and others do not, remembered per task id, bounded."""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Optional

# Facts only some native events carry: task-sent and task-received name the task, only
# task-sent names the queue, task-started is the only one with the start time. Kept:
# name, queue, state (of the last event), retries, eta, expires, root_id, parent_id, sent_at,
# started_at, worker, first_worker_at and first_worker_retries (when a worker first reported
# the attempt), run_retries (the retries of the run that started last).


class TaskFacts:
    """Least-recently-used map of task id -> facts; the oldest task is forgotten past `tasks_max`."""

    def __init__(self, tasks_max: int = 100_000) -> None:
        self.tasks_max = tasks_max
        self._tasks: "OrderedDict[str, Dict[str, object]]" = OrderedDict()
        self.forgotten = 0

    def __len__(self) -> int:
        return len(self._tasks)

    def get(self, task_id: str) -> Dict[str, object]:
        facts = self._tasks.get(task_id)
        if facts is None:
            return {}
        self._tasks.move_to_end(task_id)
        return facts

    def learn(self, task_id: str, **facts: object) -> Dict[str, object]:
        """Keeps every non-empty value given; returns all facts known about the task."""
        known = self._tasks.get(task_id)
        if known is None:
            known = self._tasks[task_id] = {}
            while len(self._tasks) > self.tasks_max:
                self._tasks.popitem(last=False)
                self.forgotten += 1
        else:
            self._tasks.move_to_end(task_id)
        for key, value in facts.items():
            if value is not None and value != "":
                known[key] = value
        return known

    def name_of(self, task_id: str) -> Optional[str]:
        name = self._tasks.get(task_id, {}).get("name")
        return name if isinstance(name, str) else None
