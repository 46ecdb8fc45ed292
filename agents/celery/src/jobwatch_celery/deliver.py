"""Batches events to `POST /api/ingest`; spools them while jobwatch is unreachable.

Order is kept: while the spool holds anything, new events go behind it on disk and the
spool is drained oldest first, so a restart of the service loses nothing and events
arrive in the order they happened (the service skips duplicates, so a batch resent
after a lost reply is harmless).

A batch jobwatch refuses as a whole (400 or 413: something in the body it will not take)
is sent again in halves, and the halves' halves, until the events it refuses are alone:
only those are dropped, each named in the log, and the rest of the batch is delivered, so
one task's odd value never costs other tasks' events. Any other 4xx but 429 drops the
batch (sending it again would fail the same way); events jobwatch rejects one by one in a
200 answer are logged and counted, never sent again. Every drop is logged with its count.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from typing import Callable, Deque, List, Optional

from .backoff import Backoff
from .limits import INGEST_BODY_BYTES_MAX
from .http_client import Client, NetworkError, Response
from .spool import Spool

log = logging.getLogger("jobwatch_celery.deliver")
ENVELOPE_BYTES = len('{"events":[]}')
EVENT_ERRORS_LOGGED_MAX = 3
# Events of one batch named one by one when refused; past it a count says how many more.
REFUSED_NAMED_MAX = 20
# Statuses saying that something in the body is refused, not the request: split the batch.
REFUSED_BODY = (400, 413)


class _Refusals:
    """A batch's events refused on their own while it was split, for the log."""

    def __init__(self) -> None:
        self.named = 0
        self.dropped = 0


class Deliverer:
    def __init__(
        self,
        client: Client,
        spool: Spool,
        batch_size: int = 1000,
        flush_interval_s: float = 0.25,
        body_bytes_max: int = INGEST_BODY_BYTES_MAX,
        memory_events_max: int = 100_000,
        backoff: Optional[Backoff] = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.spool = spool
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self.body_bytes_max = body_bytes_max
        self.memory_events_max = memory_events_max
        self.backoff = backoff or Backoff()
        self.clock = clock
        self._memory: Deque[str] = deque()
        self._wake = threading.Condition()
        self._sending = threading.Lock()  # step() and close() never interleave
        self._retry_at = 0.0
        self._outage_since: Optional[float] = None
        self.sent = 0
        self.rejected = 0
        self.dropped_memory = 0
        self.dropped_refused = 0
        self.truncated = 0
        self.dropped_unwritable = 0

    # -- producer side (any thread) --

    def submit(self, events: List[dict]) -> None:
        if not events:
            return
        encoded = [_encoded(event) for event in events]
        with self._wake:
            self._memory.extend(encoded)
            overflow = len(self._memory) - self.memory_events_max
            if overflow > 0:
                for _ in range(overflow):
                    self._memory.popleft()
                self.dropped_memory += overflow
                log.error("memory buffer full (%d events): dropped the %d oldest; %d dropped since start", self.memory_events_max, overflow, self.dropped_memory)
            if len(self._memory) >= self.batch_size:
                self._wake.notify()

    @property
    def pending(self) -> int:
        return len(self._memory) + self.spool.events

    # -- sender side (one thread) --

    def run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            with self._wake:
                if len(self._memory) < self.batch_size:
                    self._wake.wait(self.flush_interval_s)
            try:
                self.step()
            except Exception:  # a bug must not stop delivery for good
                log.exception("flush failed unexpectedly; trying again")
                stopping.wait(1.0)

    def step(self) -> None:
        with self._sending:
            self._step()

    def _step(self) -> None:
        """One flush: the spool's oldest batch when one is waiting and due, else memory."""
        if self.spool:
            self._spill_memory()
            while self.spool and self.clock() >= self._retry_at:
                oldest = self.spool.oldest()
                if oldest is None:
                    break
                sequence, batch = oldest
                if not self._send(batch, in_spool=True):
                    return
                self.spool.remove(sequence)
            return
        while True:
            batch = self._take_batch()
            if not batch:
                return
            if not self._send(batch):
                self._to_spool(batch)
                self._spill_memory()
                return

    def close(self, deadline_s: float) -> None:
        """On shutdown: send what is in memory while the service answers; spool the rest."""
        with self._sending:
            end = self.clock() + deadline_s
            while self._memory and not self.spool and self.clock() < end:
                batch = self._take_batch()
                if not self._send(batch):
                    self._to_spool(batch)
            self._spill_memory()
        if self.spool:
            log.info("shutdown: %d events kept in the spool for the next start", self.spool.events)

    def _take_batch(self) -> List[str]:
        batch: List[str] = []
        size = ENVELOPE_BYTES
        with self._wake:
            while self._memory and len(batch) < self.batch_size:
                event_bytes = len(self._memory[0].encode()) + 1
                if batch and size + event_bytes > self.body_bytes_max:
                    break
                size += event_bytes
                batch.append(self._memory.popleft())
        return batch

    def _spill_memory(self) -> None:
        while True:
            batch = self._take_batch()
            if not batch:
                return
            self._to_spool(batch)

    def _to_spool(self, batch: List[str]) -> None:
        try:
            self.spool.append(batch)
        except OSError as error:  # disk full, directory gone: say so rather than die
            self.dropped_unwritable += len(batch)
            log.error("could not write the spool (%s): dropped %d events; %d dropped this way since start", error, len(batch), self.dropped_unwritable)

    def _send(self, batch: List[str], in_spool: bool = False) -> bool:
        """True when the batch needs no resending (delivered, or refused for good)."""
        refusals = _Refusals()
        settled = self._send_part(batch, in_spool, refusals)
        if refusals.dropped > refusals.named:
            log.error("... and %d more events of the batch refused and dropped", refusals.dropped - refusals.named)
        return settled

    def _send_part(self, batch: List[str], in_spool: bool, refusals: _Refusals) -> bool:
        outside = 0 if in_spool else len(batch)  # for the log: a batch taken from memory is not counted as pending
        body = ('{"events":[' + ",".join(batch) + "]}").encode()
        try:
            response = self.client.request("POST", "/api/ingest", body)
        except NetworkError as error:
            return self._retry_later(f"jobwatch unreachable ({error})", None, outside)
        if response.status == 429 or response.status >= 500:
            return self._retry_later(f"jobwatch answered {response.status} {response.error_text()}", response.retry_after_s, outside)
        if response.status in REFUSED_BODY:
            if len(batch) == 1:
                self._refused_event(batch[0], response, refusals)
                return True
            if refusals.named == 0 and refusals.dropped == 0:
                log.warning(
                    "jobwatch refused a batch of %d events with %d (%s); sending it again in halves, so that only the events it refuses are dropped",
                    len(batch), response.status, response.error_text(),
                )
            half = (len(batch) + 1) // 2
            # the second half waits for the first: a failure (an outage) leaves the batch whole for the spool
            return self._send_part(batch[:half], in_spool, refusals) and self._send_part(batch[half:], in_spool, refusals)
        if response.status >= 400:
            self.dropped_refused += len(batch)
            log.error(
                "jobwatch refused a batch with %d (%s): dropped %d events; %d dropped this way since start",
                response.status, response.error_text(), len(batch), self.dropped_refused,
            )
            return True
        self._on_delivered(batch, response)
        return True

    def _refused_event(self, line: str, response: Response, refusals: _Refusals) -> None:
        """One event jobwatch refuses on its own: dropped, and named."""
        self.dropped_refused += 1
        refusals.dropped += 1
        if refusals.named >= REFUSED_NAMED_MAX:
            return
        refusals.named += 1
        details = response.body.get("error", {}).get("details") if isinstance(response.body, dict) and isinstance(response.body.get("error"), dict) else None
        log.error(
            "jobwatch refused %s with %d (%s %s): dropped this event only; %d events dropped this way since start",
            event_identity(line), response.status, response.error_text(), json.dumps(details or {}), self.dropped_refused,
        )

    def _retry_later(self, reason: str, retry_after_s: Optional[float], batch_events: int) -> bool:
        delay = self.backoff.next_delay(retry_after_s)
        self._retry_at = self.clock() + delay
        if self._outage_since is None:
            self._outage_since = self.clock()
        waiting = self.pending + batch_events
        log.warning("flush failed: %s; retrying in %.2fs, %d events waiting", reason, delay, waiting)
        return False

    def _on_delivered(self, batch: List[str], response: Response) -> None:
        if self._outage_since is not None:
            log.info("jobwatch reachable again after %.1fs; sending the spooled events in order", self.clock() - self._outage_since)
            self._outage_since = None
        self.backoff.reset()
        self._retry_at = 0.0
        body = response.body if isinstance(response.body, dict) else {}
        self.sent += int(body.get("accepted", 0)) + int(body.get("skipped", 0))
        rejected = int(body.get("rejected", 0))
        truncated = int(body.get("truncated", 0))
        if rejected:
            self.rejected += rejected
            for error in (body.get("errors") or [])[:EVENT_ERRORS_LOGGED_MAX]:
                index = error.get("index")
                event = event_identity(batch[index]) if isinstance(index, int) and 0 <= index < len(batch) else f"event {index}"
                log.error("jobwatch rejected %s: %s %s %s", event, error.get("code"), error.get("message"), json.dumps(error.get("details") or {}))
            log.error("jobwatch rejected %d of %d events in a batch (%d since start)", rejected, len(batch), self.rejected)
        if truncated:
            self.truncated += truncated
            log.error("jobwatch's daily event limit: %d events of a batch dropped (%d since start)", truncated, self.truncated)


def event_identity(line: str) -> str:
    """What identifies an event in the log: its type, the task's id (the worker's, the queue's name), state and time."""
    try:
        event = json.loads(line)
    except ValueError:
        return f"an event ({line[:120]})"
    if not isinstance(event, dict):
        return f"an event ({line[:120]})"
    payload = event.get("job") or event.get("worker") or event.get("queue") or {}
    payload = payload if isinstance(payload, dict) else {}

    def text(value: object) -> str:
        return value[:600] if isinstance(value, str) else json.dumps(value)[:600]

    ident = payload.get("externalId", payload.get("name"))
    state = f" ({text(payload['state'])})" if payload.get("state") else ""
    return f"event {text(event.get('type'))} {text(ident)}{state} at {text(event.get('timestamp'))}"


def _encoded(event: dict) -> str:
    """The event's JSON; a string the agent could not encode as UTF-8 (a lone surrogate) is written escaped instead of stopping delivery."""
    text = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        text = json.dumps(event, separators=(",", ":"))
    return text
