"""Free-form values copied from Celery made to fit what jobwatch takes in extensions and metadata.

A task event carries whatever the producer or the worker put in it (a root id, an ETA, a
worker's software and load), and jobwatch refuses an event whose extensions nest deeper
than 8 levels, pass 64 KB or hold a prototype key; a value deep enough refuses the whole
request. One task's odd value must never cost other tasks' events, so every string is cut,
every list and dict bounded in count, anything nested too deep replaced, and the whole held
under the byte bound by shortening its largest values; each cut is marked.

A task's arguments and result are bounded the same way (`bound_payload`), with larger
bounds and any JSON at the top, and their secret-looking keys masked on the way
(redaction.py): the walk that bounds them is the one that masks them.

The rule is the same in the three agents (agents/bounding-cases.json holds cases each
agent's tests run), so jobwatch shows a value cut alike whichever agent sent it.
"""
from __future__ import annotations

import json
import math
from typing import Any, Dict, Mapping, Optional

from .limits import AGENT_BOUNDS, FORBIDDEN_KEYS, PAYLOAD_BOUNDS, TRUNCATED_MARK, cut_marked, truncated_mark, utf16_units, well_formed
from .redaction import REDACTED, Redactor

_FORBIDDEN = frozenset(FORBIDDEN_KEYS)


def bound_json(value: Any, bounds: Optional[Mapping[str, int]] = None, redactor: Optional[Redactor] = None) -> Dict[str, Any]:
    """A copy of `value` (a dict; anything else gives {}) within `bounds` (AGENT_BOUNDS by default), the values of keys `redactor` matches masked."""
    limits = {**AGENT_BOUNDS, **(bounds or {})}
    if not isinstance(value, dict):
        return {}
    return _fit_bytes(_bound_value(value, 1, limits, redactor), limits)


def bound_payload(value: Any, bounds: Optional[Mapping[str, int]] = None, redactor: Optional[Redactor] = None) -> Any:
    """A task's arguments or result (any JSON) within `bounds` (PAYLOAD_BOUNDS by default), the values of keys `redactor` matches masked.

    Past `bytesMax` the largest value gives way first, as in `bound_json`, except that it is
    shortened rather than replaced where it can be (a string cut, a list or dict shortened
    inside by the same rule), so one large argument costs only what it must of itself, and
    nothing of its neighbours.
    """
    limits = {**PAYLOAD_BOUNDS, **(bounds or {})}
    bounded = _bound_value(value, 1, limits, redactor)
    size = _bytes_of(bounded)
    if size <= limits["bytesMax"]:
        return bounded
    shrunk = _shrink(bounded, size, limits["bytesMax"])
    return truncated_mark(f"{size} bytes") if shrunk is _NOTHING_FITS else shrunk


def _bound_value(value: Any, depth: int, bounds: Mapping[str, int], redactor: Optional[Redactor] = None) -> Any:
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
        kept = [_bound_value(item, depth + 1, bounds, redactor) for item in value[: bounds["arrayItemsMax"]]]
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
        masked = redactor is not None and redactor.matches(name)
        out[well_formed(cut_marked(name, bounds["keyChars"]))] = REDACTED if masked else _bound_value(item, depth + 1, bounds, redactor)
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


# what _shrink answers when nothing brings a value within its budget
_NOTHING_FITS = object()


def _shrink(value: Any, size: int, budget: int) -> Any:
    """`value` (serialized in `size` bytes, more than `budget`) brought within `budget`, or _NOTHING_FITS.

    A string is cut (the longest head that fits, marked); a list or dict gives up its
    largest values first, each shortened by this same rule when it can give up the whole
    excess, else replaced by a mark of its size; what still does not fit becomes one such
    mark.
    """
    if isinstance(value, str):
        head = _head_within(value, budget)
        if head is not None:
            return head
    elif isinstance(value, (list, dict)) and value:
        keys = list(value.keys()) if isinstance(value, dict) else list(range(len(value)))
        by_size = sorted(((_bytes_of(value[key]), index, key) for index, key in enumerate(keys)), key=lambda entry: (-entry[0], entry[1]))
        total = size
        for item_bytes, _, key in by_size:
            room = item_bytes - (total - budget)
            replacement = _shrink(value[key], item_bytes, room) if room > 0 else _NOTHING_FITS
            if replacement is _NOTHING_FITS:
                replacement = truncated_mark(f"{item_bytes} bytes")
                if _bytes_of(replacement) >= item_bytes:
                    continue
            value[key] = replacement
            total -= item_bytes - _bytes_of(replacement)
            if total <= budget:
                return value
    mark = truncated_mark(f"{size} bytes")
    return mark if _bytes_of(mark) <= budget else _NOTHING_FITS


def _head_within(text: str, budget: int) -> Optional[str]:
    """The longest head of `text`, marked as cut, whose JSON fits `budget` bytes (a binary search: a longer head is never smaller); None when not even one character does."""
    low = len(TRUNCATED_MARK) + 1
    high = utf16_units(text) - 1
    if high < low or _bytes_of(cut_marked(text, low)) > budget:
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if _bytes_of(cut_marked(text, middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return cut_marked(text, low)


def _bytes_of(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

