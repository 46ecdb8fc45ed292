"""The queues jobwatch paused, kept in a file beside the spool so a restart of the agent keeps them.

Celery has no paused state for a queue: a pause is every worker cancelling its consumer
of it, and a worker that restarts consumes its queues again. So the agent remembers what
it paused and, for each queue, which workers consumed it and how (exchange, type, routing
key as the worker declared it), to give those workers their consumer back on resume, and
to cancel it again on a worker that starts consuming a paused queue.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Dict, List, Optional

from .private_files import open_private

log = logging.getLogger("jobwatch_celery.paused")
PAUSED_FILE = "paused-queues.json"
PAUSED_QUEUES_MAX = 1000
CONSUMERS_PER_QUEUE_MAX = 1000

# worker hostname -> {"exchange", "exchange_type", "routing_key"} of its consumer
Consumers = Dict[str, Dict[str, Optional[str]]]


class PausedQueues:
    def __init__(self, directory: Optional[str], clock=time.time) -> None:
        """`directory`: where the record is kept (None: in memory only)."""
        self.path = os.path.join(directory, PAUSED_FILE) if directory is not None else None
        self.clock = clock
        self._lock = threading.Lock()
        self._queues: Dict[str, dict] = self._load()

    def is_paused(self, name: str) -> bool:
        with self._lock:
            return name in self._queues

    def names(self) -> List[str]:
        with self._lock:
            return list(self._queues)

    def paused_at(self, name: str) -> Optional[float]:
        with self._lock:
            entry = self._queues.get(name)
            return entry["pausedAt"] if entry else None

    def consumers(self, name: str) -> Consumers:
        with self._lock:
            entry = self._queues.get(name)
            return {host: dict(binding) for host, binding in entry["consumers"].items()} if entry else {}

    def room_for(self, name: str) -> bool:
        with self._lock:
            return name in self._queues or len(self._queues) < PAUSED_QUEUES_MAX

    def pause(self, name: str, consumers: Consumers) -> None:
        """Records the queue paused with the workers that consumed it (added to those already recorded)."""
        with self._lock:
            entry = self._queues.setdefault(name, {"pausedAt": self.clock(), "consumers": {}})
            for host, binding in consumers.items():
                if host in entry["consumers"] or len(entry["consumers"]) < CONSUMERS_PER_QUEUE_MAX:
                    entry["consumers"][host] = dict(binding)
            self._save()

    def resume(self, name: str) -> Optional[dict]:
        """Forgets the pause; returns what was recorded (to put back if the resume fails), None if not paused."""
        with self._lock:
            entry = self._queues.pop(name, None)
            if entry is not None:
                self._save()
            return entry

    def restore(self, name: str, entry: dict) -> None:
        with self._lock:
            self._queues[name] = entry
            self._save()

    def _load(self) -> Dict[str, dict]:
        if self.path is None:
            return {}
        try:
            with open(self.path, "rb") as file:
                raw = json.loads(file.read())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            # Kept aside rather than overwritten: an operator can read what was paused.
            aside = f"{self.path}.unreadable-{int(self.clock())}"
            try:
                os.replace(self.path, aside)
            except OSError:
                aside = self.path
            log.error("paused queues: cannot read %s (%s); starting with no queue paused (the file is kept as %s)", self.path, error, aside)
            return {}
        queues: Dict[str, dict] = {}
        for name, entry in (raw.get("queues") or {}).items() if isinstance(raw, dict) else ():
            if isinstance(name, str) and isinstance(entry, dict) and isinstance(entry.get("consumers"), dict):
                paused_at = entry.get("pausedAt")
                queues[name] = {"pausedAt": paused_at if isinstance(paused_at, (int, float)) else 0.0,
                                "consumers": {h: b for h, b in entry["consumers"].items() if isinstance(h, str) and isinstance(b, dict)}}
        if queues:
            log.info("paused queues: %s kept paused from a previous run", ", ".join(sorted(queues)[:20]))
        return dict(list(queues.items())[:PAUSED_QUEUES_MAX])

    def _save(self) -> None:
        """Written whole to a temporary file, fsynced and renamed: a crash leaves the old or the new record."""
        if self.path is None:
            return
        temporary = self.path + ".tmp"
        with open_private(temporary) as file:
            file.write(json.dumps({"queues": self._queues}, separators=(",", ":")).encode())
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)
