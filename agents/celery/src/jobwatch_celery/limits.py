"""jobwatch's ingest field limits, counted the way the service counts them."""
from __future__ import annotations

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


def cut(text: str, limit: int) -> str:
    """Cuts `text` to `limit` characters as JavaScript counts them (UTF-16 code units).

    Python counts code points, so an emoji is 1 here and 2 at the service; a cut that
    ignored that would get the event rejected. A surrogate pair is never split.
    """
    if len(text) * 2 <= limit:  # fast path: even if every character took two units
        return text
    encoded = text.encode("utf-16-le", "surrogatepass")
    if len(encoded) <= 2 * limit:
        return text
    head = encoded[: 2 * limit]
    last_unit = int.from_bytes(head[-2:], "little")
    if 0xD800 <= last_unit <= 0xDBFF:  # a high surrogate whose partner was cut off
        head = head[:-2]
    return head.decode("utf-16-le", "surrogatepass")


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
