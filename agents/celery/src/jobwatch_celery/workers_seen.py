"""The workers the agent heard from, and when each last said it went offline (bounded)."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Optional, Set

WORKERS_MAX = 10_000


class WorkersSeen:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        # hostname -> when this agent received its last worker-offline (None: none since it was seen)
        self._workers: "OrderedDict[str, Optional[float]]" = OrderedDict()

    def saw(self, event: dict) -> None:
        kind, hostname = event.get("type"), event.get("hostname")
        if not isinstance(kind, str) or not kind.startswith("worker-") or not isinstance(hostname, str):
            return
        with self._lock:
            if kind == "worker-offline":
                self._workers[hostname] = self.clock()  # received now: the worker's own clock may differ
            elif kind == "worker-online" or hostname not in self._workers:
                self._workers[hostname] = None
            self._workers.move_to_end(hostname)
            while len(self._workers) > WORKERS_MAX:
                self._workers.popitem(last=False)

    def offline_since(self, hostname: str) -> Optional[float]:
        with self._lock:
            return self._workers.get(hostname)

    def hostnames(self) -> Set[str]:
        with self._lock:
            return set(self._workers)
