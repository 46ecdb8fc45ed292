"""jobwatch's ingest field limits, counted the way the service counts them.

The same figures are in agents/ingest-limits.json, which the tests hold these against (and
a test of the service holds that file against its ingest schema), so the agents cannot
drift from the service or from each other.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Optional

EXTERNAL_ID_CHARS = 512
NAME_CHARS = 1024
QUEUE_CHARS = 255
WORKER_ID_CHARS = 512
HOSTNAME_CHARS = 255
ERROR_CHARS = 10_000
STACKTRACE_CHARS = 50_000
QUEUES_PER_WORKER_MAX = 256
INGEST_EVENTS_MAX = 1000
INGEST_BODY_BYTES_MAX = 5 * 1024 * 1024
# Keys the service refuses in extensions and metadata.
FORBIDDEN_KEYS = ("__proto__", "constructor", "prototype")

# What the agent copies from Celery into extensions or metadata is cut to these, within the
# service's 64 KB and 8 levels (bytes with room to spare for another serializer's figures).
AGENT_BOUNDS = {
    "bytesMax": 60_000,
    "depthMax": 8,
    "stringChars": 4096,
    "keyChars": 128,
    "arrayItemsMax": 100,
    "objectKeysMax": 100,
}
# A task's arguments and result are cut to these, within what jobwatch keeps of them (64 KiB
# each): past them jobwatch would keep a cut head that is no longer JSON.
PAYLOAD_BOUNDS = {
    "bytesMax": 60_000,
    "depthMax": 16,
    "stringChars": 16_384,
    "keyChars": 256,
    "arrayItemsMax": 1000,
    "objectKeysMax": 1000,
}
# Ends every value the agent shortened, so a reader sees that something was left out.
TRUNCATED_MARK = "\u2026[truncated]"


def truncated_mark(detail: str) -> str:
    """The mark with what was left out: `…[truncated: 3 more items]`."""
    return f"{TRUNCATED_MARK[:-1]}: {detail}]"


# a surrogate Python holds on its own (JSON allows `\ud800`, UTF-8 cannot carry it)
_SURROGATE = re.compile("[\ud800-\udfff]")
# characters past the Basic Multilingual Plane: two UTF-16 units each
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def well_formed(text: str) -> str:
    """`text` with every lone surrogate as U+FFFD (the same length), so it can be encoded as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def utf16_units(text: str) -> int:
    """The length the service counts (JavaScript's: UTF-16 code units)."""
    if not _ASTRAL.search(text):
        return len(text)
    return len(text) + len(_ASTRAL.findall(text))


def cut(text: str, limit: int) -> str:
    """Cuts `text` to `limit` characters as JavaScript counts them (UTF-16 code units).

    Python counts code points, so an emoji is 1 here and 2 at the service; a cut that
    ignored that would get the event rejected. A surrogate pair is never split, and a lone
    surrogate in what is kept becomes U+FFFD (an encoder's error handler, called for each
    one, made a hostile string cost milliseconds). Only the first `limit` characters are
    looked at: whatever is cut lies within them.
    """
    if len(text) * 2 <= limit:  # fast path: even if every character took two units
        return text
    head = text[:limit]
    if not _ASTRAL.search(head):  # one unit a character
        return text if len(text) <= limit else well_formed(head)
    encoded = well_formed(head).encode("utf-16-le")
    if len(encoded) <= 2 * limit and len(text) <= limit:
        return text
    encoded = encoded[: 2 * limit]
    last_unit = int.from_bytes(encoded[-2:], "little")
    if 0xD800 <= last_unit <= 0xDBFF:  # a high surrogate whose partner was cut off
        encoded = encoded[:-2]
    return encoded.decode("utf-16-le")


def cut_marked(text: str, limit: int) -> str:
    """`text` within `limit` UTF-16 units; when it was longer, cut and ended with TRUNCATED_MARK
    (just cut where the limit is too short to hold the mark)."""
    if len(text) * 2 <= limit or (len(text) <= limit and utf16_units(text) <= limit):
        return text
    if limit <= len(TRUNCATED_MARK):
        return cut(text, limit)
    return cut(text, limit - len(TRUNCATED_MARK)) + TRUNCATED_MARK


def iso_from_epoch(seconds: float) -> str:
    """Epoch seconds as the UTC ISO 8601 string with milliseconds the service returns."""
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch_from_iso(value: object) -> Optional[float]:
    """Celery's ETA and expiry strings (naive ones are UTC, as Celery writes them); None if unreadable."""
    if not isinstance(value, str) or value == "":
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
