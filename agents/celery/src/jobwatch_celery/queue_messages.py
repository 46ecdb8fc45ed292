"""Whether a task's message still waits in its queue on the broker (Redis), looked up boundedly.

A task that waits in the broker is known to no worker and, without `task_track_started`
or a result yet, to no result backend: only its queue holds it. On Redis a queue is a
list per priority step (kombu's naming); each message carries the task id in its headers
(Celery's message protocol 2). The lookup reads at most `MESSAGES_MAX` messages: past
that it cannot say, and says so (None) rather than "not there".
"""
from __future__ import annotations

import json
from typing import Optional

from celery import Celery

MESSAGES_MAX = 10_000
CHUNK = 1000


def waits_in_queue(app: Celery, queue: str, task_id: str) -> Optional[bool]:
    """True when the task's message is in the queue, False when it is not, None when the agent cannot tell
    (not a Redis broker, or the queue is longer than it reads)."""
    with app.connection_for_read() as connection:
        connection.ensure_connection(max_retries=1)
        if connection.transport.driver_type != "redis":
            return None
        channel = connection.default_channel
        read = 0
        with channel.conn_or_acquire() as client:
            for priority in channel.priority_steps:
                key = channel._q_for_pri(queue, priority)
                start = 0
                while True:
                    messages = client.lrange(key, start, start + CHUNK - 1)
                    for raw in messages:
                        if _task_id_of(raw) == task_id:
                            return True
                    read += len(messages)
                    start += CHUNK
                    if len(messages) < CHUNK:
                        break
                    if read >= MESSAGES_MAX:
                        return None
    return False


def _task_id_of(raw: bytes) -> Optional[str]:
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    headers = message.get("headers") if isinstance(message, dict) else None
    task_id = headers.get("id") if isinstance(headers, dict) else None
    return task_id if isinstance(task_id, str) else None
