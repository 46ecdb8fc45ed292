"""Free-form values copied from Celery made to fit what jobwatch takes in extensions and metadata.

A task event carries whatever the producer or the worker put in it (a root id, an ETA, a
worker's software and load), and jobwatch refuses an event whose extensions nest deeper
than 8 levels, pass 64 KB or hold a prototype key; a value deep enough refuses the whole
request. One task's odd value must never cost other tasks' events, so every string is cut,
every list and dict bounded in count, anything nested too deep replaced, and the whole held
under the byte bound by shortening its largest values; each cut is marked.

The rule is the same in the three agents (agents/bounding-cases.json holds cases each
agent's tests run), so jobwatch shows a value cut alike whichever agent sent it.
"""
from __future__ import annotations

import json
import math
from typing import Any, Dict, Mapping, Optional

from .limits import AGENT_BOUNDS, FORBIDDEN_KEYS, TRUNCATED_MARK, cut_marked, truncated_mark, well_formed

_FORBIDDEN = frozenset(FORBIDDEN_KEYS)


def bound_json(value: Any, bounds: Optional[Mapping[str, int]] = None) -> Dict[str, Any]:
    """A copy of `value` (a dict; anything else gives {}) within `bounds` (AGENT_BOUNDS by default)."""
    limits = {**AGENT_BOUNDS, **(bounds or {})}
    if not isinstance(value, dict):
        return {}
    return _fit_bytes(_bound_value(value, 1, limits), limits)


def _bound_value(value: Any, depth: int, bounds: Mapping[str, int]) -> Any:
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return well_formed(cut_marked(value, bounds["stringChars"]))
    if not isinstance(value, (list, tuple, dict)):
        return well_formed(cut_marked(str(value), bounds["stringChars"]))
    if depth > bounds["depthMax"]:
        return truncated_mark(f"deeper than {bounds['depthMax']} levels")
    if isinstance(value, (list, tuple)):
        kept = [_bound_value(item, depth + 1, bounds) for item in value[: bounds["arrayItemsMax"]]]
        if len(value) > bounds["arrayItemsMax"]:
            kept.append(truncated_mark(f"{len(value) - bounds['arrayItemsMax']} more items"))
        return kept
    out: Dict[str, Any] = {}
    kept_keys = 0
    left = 0
    for key, item in value.items():
        name = key if isinstance(key, str) else str(key)
        if name in _FORBIDDEN or kept_keys >= bounds["objectKeysMax"]:
            left += 1
            continue
        kept_keys += 1
        out[well_formed(cut_marked(name, bounds["keyChars"]))] = _bound_value(item, depth + 1, bounds)
    if left:
        out[TRUNCATED_MARK] = f"{left} keys left out"
    return out


def _fit_bytes(value: Dict[str, Any], bounds: Mapping[str, int]) -> Dict[str, Any]:
    """Past `bytesMax` serialized, the largest values (top level) are replaced by a mark saying their size, largest first."""
    size = _bytes_of(value)
    if size <= bounds["bytesMax"]:
        return value
    by_size = sorted(((_bytes_of(item), index, key) for index, (key, item) in enumerate(value.items())), key=lambda entry: (-entry[0], entry[1]))
    for item_bytes, _, key in by_size:
        mark = truncated_mark(f"{item_bytes} bytes")
        mark_bytes = _bytes_of(mark)
        if item_bytes <= mark_bytes:
            continue
        value[key] = mark
        size -= item_bytes - mark_bytes
        if size <= bounds["bytesMax"]:
            return value
    return {TRUNCATED_MARK: f"{size} bytes left out"}


def _bytes_of(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

