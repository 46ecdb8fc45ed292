"""Celery's own event receiver (works with every broker Celery supports), kept connected."""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Optional

from celery import Celery
from celery.events.receiver import EventReceiver

from .backoff import Backoff

log = logging.getLogger("jobwatch_celery.capture")
# A connection that lived this long was a good one: the next failure starts backoff over.
GOOD_CONNECTION_S = 10.0


class _EpochReceiver(EventReceiver):
    """Keeps each event's `timestamp` as the sender's epoch time.

    Celery's receiver "localizes" timestamps by the difference between the sender's and
    this machine's UTC offsets by default, which moves an epoch time (already zone-free)
    by hours when the two are in different zones.
    """

    def event_from_message(self, body, localize=True, *args, **kwargs):
        return super().event_from_message(body, False, *args, **kwargs)


class Capture:
    def __init__(
        self,
        app: Celery,
        on_event: Callable[[dict], None],
        backoff: Optional[Backoff] = None,
        receiver_class: Callable[..., EventReceiver] = _EpochReceiver,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.on_event = on_event
        self.backoff = backoff or Backoff(base_s=1.0, cap_s=30.0)
        self.receiver_class = receiver_class
        self.clock = clock
        self.events_seen = 0
        self._receiver: Optional[EventReceiver] = None

    def run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            connected_at: Optional[float] = None
            try:
                with self.app.connection_for_read() as connection:
                    connection.ensure_connection(max_retries=1)
                    connected_at = self.clock()
                    log.info("connected to broker %s; capturing task-* and worker-* events", connection.as_uri())
                    receiver = self.receiver_class(connection, handlers={"*": self._handle}, app=self.app)
                    receiver.connect_max_retries = 1
                    self._receiver = receiver
                    if stopping.is_set():
                        return
                    # wakeup=True asks every worker for a heartbeat at once, so workers show up now.
                    receiver.capture(limit=None, timeout=None, wakeup=True)
            except Exception as error:  # any broker failure: reconnect, never die
                if stopping.is_set():
                    return
                if connected_at is not None and self.clock() - connected_at >= GOOD_CONNECTION_S:
                    self.backoff.reset()
                delay = self.backoff.next_delay()
                state = "lost" if connected_at is not None else "failed"
                log.warning("broker connection %s (%s: %s); reconnecting in %.1fs", state, type(error).__name__, error, delay)
                stopping.wait(delay)
            finally:
                self._receiver = None

    def stop(self) -> None:
        receiver = self._receiver
        if receiver is not None:
            receiver.should_stop = True

    def _handle(self, event: dict) -> None:
        self.events_seen += 1
        try:
            self.on_event(event)
        except Exception:  # one odd event must not stop the capture
            log.exception("could not handle a %s event", event.get("type"))


def enable_events(app: Celery) -> None:
    """Workers forget `enable_events` when they restart: the agent repeats it."""
    app.control.enable_events()
