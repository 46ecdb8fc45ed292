"""Queue depth from the broker itself: no management plugin, every few seconds.

Each snapshot also says whether jobwatch paused the queue (`extensions.paused`), from the
agent's record of paused queues, and goes out at once when that changes.

Redis: the queue is a list, plus one list per priority step named as kombu names them
(`<queue>\\x06\\x16<priority>`), so the depth is the sum of their lengths. Other brokers:
a passive queue declare reports the message and consumer counts.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from celery import Celery

from .limits import QUEUE_CHARS, iso_from_epoch
from .normalize import WorkerInfo
from .worker_pool import pool_size

log = logging.getLogger("jobwatch_celery.queues")
QUEUES_MAX = 1000
# An unchanged depth is re-sent only this often: snapshots count against the daily quota.
UNCHANGED_RESEND_S = 60.0
INSPECT_TIMEOUT_S = 1.0


class QueueMonitor:
    def __init__(
        self,
        app: Celery,
        worker_info: WorkerInfo,
        queues_from_events: Callable[[], Iterable[str]],
        connection_id: str,
        named_queues: Iterable[str] = (),
        paused: Callable[[], Iterable[str]] = lambda: (),
    ) -> None:
        """`paused`: the queues jobwatch paused (reported even when no worker consumes them then)."""
        self.app = app
        self.paused = paused
        self.named_queues = list(named_queues)
        self.worker_info = worker_info
        self.queues_from_events = queues_from_events
        self.connection_id = connection_id
        self._connection = None
        self._failing = False
        self._last_sent: Dict[str, Tuple[Tuple[int, Optional[int], bool], float]] = {}
        self.clock = time.monotonic

    def refresh_workers(self) -> Dict[str, list]:
        """Which queues each worker consumes and its pool size, from `inspect` (replies within a second);
        returns what `active_queues` answered."""
        inspect = self.app.control.inspect(timeout=INSPECT_TIMEOUT_S)
        active_queues = inspect.active_queues() or {}
        stats = inspect.stats() or {}
        self.worker_info.queues = {
            hostname: [q["name"] for q in queues if isinstance(q, dict) and isinstance(q.get("name"), str)]
            for hostname, queues in active_queues.items()
            if isinstance(queues, list)
        }
        concurrency: Dict[str, int] = {}
        for hostname, info in stats.items():
            size = pool_size(info)
            if size is not None:
                concurrency[hostname] = size
        self.worker_info.concurrency = concurrency
        return active_queues

    def known_queues(self) -> List[str]:
        names: Dict[str, None] = dict.fromkeys(self.named_queues)
        names.update(dict.fromkeys(self.paused()))
        for queues in list(self.worker_info.queues.values()):
            for name in queues:
                names[name] = None
        for name in self.queues_from_events():
            names[name] = None
        known = [name for name in names if 0 < len(name) <= QUEUE_CHARS][:QUEUES_MAX]
        for gone in set(self._last_sent) - set(known):
            del self._last_sent[gone]
        return known

    def consumers(self) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for queues in list(self.worker_info.queues.values()):
            for name in set(queues):
                counts[name] = counts.get(name, 0) + 1
        return counts

    def snapshots(self) -> List[dict]:
        """One `queue_snapshot` per known queue; [] (and one log line) while the broker is unreachable."""
        names = self.known_queues()
        if not names:
            return []
        try:
            depths = self._depths(names)
        except Exception as error:
            self._drop_connection()
            if not self._failing:
                log.warning("queue depth: broker unreachable (%s: %s); retrying every cycle", type(error).__name__, error)
                self._failing = True
            return []
        if self._failing:
            log.info("queue depth: broker reachable again")
            self._failing = False
        consumers = self.consumers()
        paused = set(self.paused())
        timestamp = iso_from_epoch(time.time())
        events = []
        now = self.clock()
        for name, (depth, broker_consumers) in depths.items():
            queue = {"name": name, "depth": depth, "extensions": {"paused": name in paused}}
            known = broker_consumers if broker_consumers is not None else consumers.get(name)
            if known is not None:
                queue["consumers"] = known
            last = self._last_sent.get(name)
            seen = (depth, known, name in paused)
            if last is not None and last[0] == seen and now - last[1] < UNCHANGED_RESEND_S:
                continue
            self._last_sent[name] = (seen, now)
            events.append({"type": "queue_snapshot", "timestamp": timestamp, "framework": "celery", "connectionId": self.connection_id, "queue": queue})
        return events

    def close(self) -> None:
        self._drop_connection()

    def _depths(self, names: List[str]) -> Dict[str, Tuple[int, Optional[int]]]:
        if self._connection is None:
            self._connection = self.app.connection_for_read()
            self._connection.ensure_connection(max_retries=1)
        channel = self._connection.default_channel
        if self._connection.transport.driver_type == "redis":
            return {name: (redis_depth(channel, name), None) for name in names}
        return {name: self._declared_depth(name) for name in names}

    def _declared_depth(self, name: str) -> Tuple[int, Optional[int]]:
        try:
            # A channel per declare: AMQP closes the channel when the queue does not exist.
            with self._connection.channel() as channel:
                _, messages, consumers = channel.queue_declare(queue=name, passive=True)
            return messages, consumers
        except Exception as error:
            # No such queue (yet): nothing is waiting in it.
            if "NOT_FOUND" in str(error) or "404" in str(error):
                return 0, None
            raise

    def _drop_connection(self) -> None:
        if self._connection is not None:
            try:
                self._connection.release()
            except Exception:
                pass
            self._connection = None


def redis_depth(channel, name: str) -> int:
    """Sum of the lengths of a queue's priority lists, named by the channel's own rule."""
    with channel.conn_or_acquire() as client:
        with client.pipeline() as pipe:
            for priority in channel.priority_steps:
                pipe.llen(channel._q_for_pri(name, priority))
            sizes = pipe.execute()
    return sum(size for size in sizes if isinstance(size, int))
