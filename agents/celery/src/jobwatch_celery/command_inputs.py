"""What a command from jobwatch may name, checked before anything reaches Celery.

Anyone holding the connection's API key can send jobwatch events under any task id, queue,
task or worker name, and a command names what jobwatch was sent. So every name and id is
checked here first: a string, within jobwatch's own limit, without control characters (a
newline in a queue name must not reach a log line or a Redis key), and not one jobwatch
cut short (`…[truncated]` at the limit names nothing Celery has). Each check answers why
the value cannot be used, or None.
"""
from __future__ import annotations

import math
import re
from typing import Optional

from .limits import EXTERNAL_ID_CHARS, NAME_CHARS, QUEUE_CHARS, TRUNCATED_MARK, WORKER_ID_CHARS, utf16_units

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# Celery's rate syntax (kombu.utils.rate): a count per second, minute or hour.
_RATE = re.compile(r"(\d{1,9}(?:\.\d{1,6})?)(?:/([smh]))?")
POOL_DELTA_MAX = 100


def _name_problem(value: object, what: str, limit: int) -> Optional[str]:
    if not isinstance(value, str) or value == "" or utf16_units(value) > limit or _CONTROL.search(value):
        return f"not a {what}: {str(value)[:200]!r}"
    if utf16_units(value) == limit and value.endswith(TRUNCATED_MARK):
        return f"the {what} was cut to {limit} characters when it was sent to jobwatch: the agent cannot tell which one it is"
    return None


def task_id_problem(task_id: object) -> Optional[str]:
    return _name_problem(task_id, "Celery task id", EXTERNAL_ID_CHARS)


def queue_problem(queue: object) -> Optional[str]:
    return _name_problem(queue, "queue name", QUEUE_CHARS)


def task_name_problem(name: object) -> Optional[str]:
    return _name_problem(name, "task name", NAME_CHARS)


def worker_problem(hostname: object) -> Optional[str]:
    return _name_problem(hostname, "Celery worker name", WORKER_ID_CHARS)


def rate_problem(rate: object) -> Optional[str]:
    """A rate limit in Celery's syntax (`10/m`, `0.5/s`, `100`), or None to clear it."""
    if rate is None:
        return None
    match = _RATE.fullmatch(rate) if isinstance(rate, str) else None
    if match is None:
        return f"not a Celery rate limit: {str(rate)[:100]!r} (a count per second, minute or hour such as '10/m', or null to clear it)"
    if float(match.group(1)) == 0:
        return "a rate limit of 0 is no limit in Celery: send null to clear the rate limit"
    return None


def pool_delta_problem(delta: object) -> Optional[str]:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not math.isfinite(delta) or delta != int(delta) or delta == 0:
        return f"not a pool change: {str(delta)[:50]!r} (a non-zero whole number of processes to add or take away)"
    if abs(delta) > POOL_DELTA_MAX:
        return f"a pool changes by at most {POOL_DELTA_MAX} processes at a time, not {int(delta)}"
    return None


def params_of(command: dict) -> Optional[dict]:
    """The command's params (absent: {}), or None when they are not an object."""
    params = command.get("params")
    if params is None:
        return {}
    return params if isinstance(params, dict) else None
