"""A bounded on-disk queue of event batches for while jobwatch cannot be reached.

One file per batch, named `<sequence>-<event count>.json`, written to a temporary name,
fsynced and renamed, so a crash of the agent leaves whole batches only (files 0600 in a 0700
directory: they hold the app's task names and errors). Files are sent
oldest first; past the byte bound the oldest batches are dropped, and the drop is logged
with its count (the newest events are kept: they say what the cluster looks like now).
"""
from __future__ import annotations

import json
import logging
import os
import re
from typing import List, Optional, Tuple

from .private_files import makedirs_private, open_private

log = logging.getLogger("jobwatch_celery.spool")
BATCH_FILE = re.compile(r"^(\d{12})-(\d+)\.json$")


class Spool:
    def __init__(self, directory: str, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.dropped_events = 0
        makedirs_private(directory)
        self._files: List[Tuple[int, int, int]] = []  # (sequence, events, bytes), oldest first
        for name in os.listdir(directory):
            match = BATCH_FILE.match(name)
            if match:
                size = os.path.getsize(os.path.join(directory, name))
                self._files.append((int(match.group(1)), int(match.group(2)), size))
            elif name.endswith(".tmp"):
                os.unlink(os.path.join(directory, name))  # a write the agent did not finish
        self._files.sort()
        self._events = sum(count for _, count, _ in self._files)
        self._bytes = sum(size for _, _, size in self._files)
        self._next = (self._files[-1][0] + 1) if self._files else 1
        if self._files:
            log.info("spool: %d events in %d batches kept from a previous run; sending them first", self.events, len(self._files))

    def __bool__(self) -> bool:
        return bool(self._files)

    @property
    def events(self) -> int:
        return self._events

    @property
    def bytes(self) -> int:
        return self._bytes

    def append(self, encoded_events: List[str]) -> None:
        if not encoded_events:
            return
        data = ("[" + ",".join(encoded_events) + "]").encode()
        sequence = self._next
        self._next += 1
        path = self._path(sequence, len(encoded_events))
        with open_private(path + ".tmp") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(path + ".tmp", path)
        self._files.append((sequence, len(encoded_events), len(data)))
        self._events += len(encoded_events)
        self._bytes += len(data)
        self._enforce_bound()

    def oldest(self) -> Optional[Tuple[int, List[str]]]:
        """The oldest batch as (sequence, encoded events); an unreadable file is dropped and logged."""
        while self._files:
            sequence, count, _ = self._files[0]
            try:
                with open(self._path(sequence, count), "rb") as file:
                    events = json.loads(file.read())
                return sequence, [json.dumps(event, separators=(",", ":")) for event in events]
            except (OSError, ValueError) as error:
                log.error("spool: dropped %d events: batch file %d unreadable (%s)", count, sequence, error)
                self.dropped_events += count
                self.remove(sequence)
        return None

    def remove(self, sequence: int) -> None:
        for index, (seq, count, size) in enumerate(self._files):
            if seq == sequence:
                del self._files[index]
                self._events -= count
                self._bytes -= size
                try:
                    os.unlink(self._path(seq, count))
                except FileNotFoundError:
                    pass
                return

    def _enforce_bound(self) -> None:
        while self._files and self.bytes > self.max_bytes:
            sequence, count, size = self._files[0]
            self.dropped_events += count
            log.error(
                "spool full (%d MB bound): dropped the %d oldest events (%d bytes); %d dropped since start",
                self.max_bytes // (1024 * 1024), count, size, self.dropped_events,
            )
            self.remove(sequence)

    def _path(self, sequence: int, count: int) -> str:
        return os.path.join(self.directory, f"{sequence:012d}-{count}.json")
