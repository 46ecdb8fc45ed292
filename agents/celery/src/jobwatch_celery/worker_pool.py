"""A worker's pool size as `inspect().stats()` reports it."""
from __future__ import annotations

from typing import Optional


def pool_size(stats: object) -> Optional[int]:
    """The worker's pool size now: its processes where listed (prefork grows and shrinks them while
    `max-concurrency` keeps the size it started with), else its `max-concurrency`."""
    pool = stats.get("pool") if isinstance(stats, dict) else None
    if not isinstance(pool, dict):
        return None
    processes = pool.get("processes")
    if isinstance(processes, list):
        return len(processes)
    size = pool.get("max-concurrency")
    return size if isinstance(size, int) and not isinstance(size, bool) else None
