"""Batching, backoff, the spool, and what is dropped (always counted and logged)."""
import json
import logging
import random

import pytest

from jobwatch_celery.backoff import Backoff
from jobwatch_celery.deliver import Deliverer
from jobwatch_celery.http_client import NetworkError, Response, parse_retry_after
from jobwatch_celery.spool import Spool


class FakeService:
    """Answers ingest requests from a script; records every delivered batch."""

    def __init__(self):
        self.script = []  # what to answer next: "down", a status, or a Response
        self.batches = []
        self.requests = 0

    def request(self, method, path, data=None):
        assert (method, path) == ("POST", "/api/ingest")
        self.requests += 1
        events = json.loads(data)["events"]
        answer = self.script.pop(0) if self.script else 200
        if answer == 200 and any(event.get("poison") for event in events):
            # what jobwatch does with a body nested too deep: the whole request is refused
            return Response(400, {"error": {"code": "VALIDATION_ERROR", "message": "request body must not nest more than 32 levels deep"}}, None)
        if answer == "down":
            raise NetworkError("connection refused")
        if isinstance(answer, Response):
            return answer
        if answer == 200:
            self.batches.append(events)
            return Response(200, {"accepted": len(events), "rejected": 0, "skipped": 0, "truncated": 0}, None)
        return Response(answer, {"error": {"code": "X", "message": "no"}}, None)

    def delivered(self):
        return [event["n"] for batch in self.batches for event in batch]


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def events(start, count):
    return [{"n": i, "type": "job_state_change", "timestamp": f"2026-11-20T10:00:00.{i:03d}Z", "job": {"externalId": f"task-{i}", "state": "queued"}, "pad": "x" * 10}
            for i in range(start, start + count)]


@pytest.fixture
def make(tmp_path):
    def build(**options):
        service = FakeService()
        clock = FakeClock()
        spool = Spool(str(tmp_path / "spool"), options.pop("spool_max_bytes", 10 * 1024 * 1024))
        backoff = Backoff(base_s=0.25, cap_s=30, rng=random.Random(7))
        return Deliverer(service, spool, backoff=backoff, clock=clock, **options), service, clock

    return build


def test_batches_hold_at_most_the_batch_size_and_keep_order(make):
    deliverer, service, _ = make(batch_size=1000)
    deliverer.submit(events(0, 2500))
    deliverer.step()
    assert [len(b) for b in service.batches] == [1000, 1000, 500]
    assert service.delivered() == list(range(2500))


def test_batches_stay_under_the_body_byte_limit(make):
    deliverer, service, _ = make(batch_size=1000, body_bytes_max=2000)
    deliverer.submit(events(0, 100))
    deliverer.step()
    assert len(service.batches) > 1
    for batch in service.batches:
        assert len(json.dumps({"events": batch}, separators=(",", ":")).encode()) <= 2000
    assert service.delivered() == list(range(100))


def test_while_the_service_is_down_events_go_to_the_spool_and_are_sent_in_order_later(make):
    deliverer, service, clock = make(batch_size=10)
    deliverer.submit(events(0, 15))
    service.script = ["down"]
    deliverer.step()
    assert service.batches == [] and deliverer.spool.events == 15  # first batch failed; the rest followed it to disk
    deliverer.submit(events(15, 5))
    deliverer.step()  # not due yet: new events join the spool behind the old ones
    assert deliverer.spool.events == 20 and service.batches == []
    clock.now += 60
    deliverer.step()
    assert service.delivered() == list(range(20)) and deliverer.spool.events == 0
    deliverer.submit(events(20, 3))
    deliverer.step()
    assert service.delivered() == list(range(23))


def test_retryable_answers_back_off_and_other_4xx_drop_with_a_log_line(make, caplog):
    caplog.set_level(logging.INFO)
    deliverer, service, clock = make(batch_size=5)
    for answer in (503, 429, "down"):
        service.script = [answer]
        deliverer.submit(events(0, 5))
        deliverer.step()
        assert deliverer.spool.events == 5, answer
        clock.now += 60
        deliverer.step()
        assert deliverer.spool.events == 0
    assert len(service.batches) == 3
    service.script = [401]
    deliverer.submit(events(0, 5))
    deliverer.step()
    assert deliverer.dropped_refused == 5 and deliverer.spool.events == 0 and len(service.batches) == 3
    assert "jobwatch refused a batch with 401 (X: no): dropped 5 events" in caplog.text
    assert "flush failed: jobwatch answered 503" in caplog.text and "jobwatch reachable again" in caplog.text


def test_a_batch_refused_whole_is_sent_again_in_halves_and_only_the_refused_event_is_dropped_and_named(make, caplog):
    deliverer, service, _ = make(batch_size=1000)
    batch = events(0, 96)
    batch[41]["poison"] = True
    deliverer.submit(batch)
    deliverer.step()
    assert sorted(service.delivered()) == [n for n in range(96) if n != 41]
    assert deliverer.dropped_refused == 1 and deliverer.pending == 0
    assert service.requests <= 1 + 2 * 7  # the whole, then a refused half and its sibling per level
    assert "jobwatch refused a batch of 96 events with 400 (VALIDATION_ERROR: request body must not nest more than 32 levels deep); sending it again in halves" in caplog.text
    assert "jobwatch refused event job_state_change task-41 (queued) at 2026-11-20T10:00:00.041Z with 400" in caplog.text
    assert "dropped this event only; 1 events dropped this way since start" in caplog.text


def test_many_refused_events_are_each_dropped_alone_the_first_named_and_the_rest_counted(make, caplog):
    deliverer, service, _ = make(batch_size=1000)
    batch = events(0, 60)
    for event in batch[::2]:
        event["poison"] = True
    deliverer.submit(batch)
    deliverer.step()
    assert sorted(service.delivered()) == list(range(1, 60, 2)) and deliverer.dropped_refused == 30
    assert caplog.text.count("dropped this event only") == 20
    assert "... and 10 more events of the batch refused and dropped" in caplog.text


def test_an_outage_in_the_middle_of_a_split_keeps_the_whole_batch_in_the_spool(make):
    deliverer, service, clock = make(batch_size=1000)
    batch = events(0, 8)
    batch[1]["poison"] = True
    service.script = [200, 200, "down"]  # the whole (refused), its first half (refused), then the network is gone
    deliverer.submit(batch)
    deliverer.step()
    assert deliverer.spool.events == 8 and deliverer.dropped_refused == 0
    clock.now += 60
    deliverer.step()
    assert deliverer.spool.events == 0 and deliverer.dropped_refused == 1
    assert sorted(set(service.delivered())) == [0, 2, 3, 4, 5, 6, 7]


def test_an_event_the_agent_cannot_encode_as_utf8_goes_escaped_and_stops_nothing(make):
    deliverer, service, _ = make(batch_size=10)
    deliverer.submit([{"n": 0, "text": "lone \ud800 surrogate"}, {"n": 1}])
    deliverer.step()
    assert service.delivered() == [0, 1] and service.batches[0][0]["text"] == "lone \ud800 surrogate"


def test_retry_after_is_a_floor_for_the_next_attempt(make):
    deliverer, service, clock = make(batch_size=5)
    service.script = [Response(429, {"error": {"code": "DAILY_LIMIT_EXCEEDED", "message": "limit"}}, 120.0)]
    deliverer.submit(events(0, 5))
    deliverer.step()
    clock.now += 119
    deliverer.step()
    assert service.batches == []
    clock.now += 2
    deliverer.step()
    assert service.delivered() == list(range(5))


def test_rejected_events_are_counted_and_the_first_errors_logged(make, caplog):
    deliverer, service, _ = make(batch_size=10)
    errors = [{"index": i, "code": "VALIDATION_ERROR", "message": "bad", "details": {"job.name": ["too long"]}} for i in range(5)]
    service.script = [Response(200, {"accepted": 5, "rejected": 5, "skipped": 0, "truncated": 2, "errors": errors}, None)]
    deliverer.submit(events(0, 10))
    deliverer.step()
    assert deliverer.rejected == 5 and deliverer.truncated == 2
    logged = [r.getMessage() for r in caplog.records if "rejected event" in r.getMessage()]
    assert len(logged) == 3 and "jobwatch rejected event job_state_change task-0 (queued) at 2026-11-20T10:00:00.000Z: VALIDATION_ERROR bad" in logged[0]
    assert "job.name" in logged[0]
    assert "daily event limit: 2 events" in caplog.text


def test_a_full_memory_buffer_drops_the_oldest_and_says_so(make, caplog):
    deliverer, service, _ = make(batch_size=10, memory_events_max=20)
    deliverer.submit(events(0, 25))
    assert deliverer.dropped_memory == 5
    assert "memory buffer full (20 events): dropped the 5 oldest" in caplog.text
    deliverer.step()
    assert service.delivered() == list(range(5, 25))


def test_a_full_spool_drops_the_oldest_batches_and_says_so(make, caplog):
    deliverer, service, _ = make(batch_size=10, spool_max_bytes=1000)
    service.script = ["down"]
    deliverer.submit(events(0, 50))
    deliverer.step()
    assert deliverer.spool.bytes <= 1000
    assert deliverer.spool.dropped_events > 0
    assert deliverer.spool.events + deliverer.spool.dropped_events == 50
    assert "spool full" in caplog.text and "dropped the 10 oldest events" in caplog.text


def test_the_spool_survives_an_agent_restart(tmp_path):
    first = Spool(str(tmp_path), 1024 * 1024)
    first.append([json.dumps({"n": 1}), json.dumps({"n": 2})])
    first.append([json.dumps({"n": 3})])
    (tmp_path / "000000000009-1.json.tmp").write_text("[half")  # an append cut off by a crash
    again = Spool(str(tmp_path), 1024 * 1024)
    assert again.events == 3
    sequence, batch = again.oldest()
    assert [json.loads(e)["n"] for e in batch] == [1, 2]
    again.remove(sequence)
    again.append([json.dumps({"n": 4})])
    assert not (tmp_path / "000000000009-1.json.tmp").exists()
    order = []
    while again:
        sequence, batch = again.oldest()
        order += [json.loads(e)["n"] for e in batch]
        again.remove(sequence)
    assert order == [3, 4]


def test_an_unreadable_spool_file_is_dropped_and_counted(tmp_path, caplog):
    spool = Spool(str(tmp_path), 1024 * 1024)
    spool.append([json.dumps({"n": 1})])
    spool.append([json.dumps({"n": 2})])
    (tmp_path / "000000000001-1.json").write_text("not json")
    sequence, batch = spool.oldest()
    assert json.loads(batch[0]) == {"n": 2} and spool.dropped_events == 1
    assert "unreadable" in caplog.text


def test_close_sends_what_is_in_memory_or_keeps_it_in_the_spool(make):
    deliverer, service, _ = make(batch_size=10)
    deliverer.submit(events(0, 12))
    deliverer.close(5.0)
    assert service.delivered() == list(range(12))
    deliverer.submit(events(12, 3))
    service.script = ["down"]
    deliverer.close(5.0)
    assert deliverer.spool.events == 3


def test_backoff_grows_with_jitter_up_to_the_cap_and_resets():
    backoff = Backoff(base_s=0.25, cap_s=4.0, rng=random.Random(1))
    delays = [backoff.next_delay() for _ in range(8)]
    for attempt, delay in enumerate(delays):
        step = min(4.0, 0.25 * 2**attempt)
        assert step / 2 <= delay <= step
    assert len(set(delays)) == len(delays)  # jittered
    assert backoff.next_delay(retry_after_s=10.0) == 10.0
    backoff.reset()
    assert backoff.next_delay() <= 0.25


def test_retry_after_header_as_seconds_or_http_date():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_a_spool_that_cannot_be_written_drops_with_a_log_line_and_delivery_goes_on(make, caplog):
    deliverer, service, clock = make(batch_size=5)

    def unwritable(encoded_events):
        raise OSError(28, "No space left on device")

    deliverer.spool.append = unwritable
    service.script = ["down"]
    deliverer.submit(events(0, 5))
    deliverer.step()
    assert deliverer.dropped_unwritable == 5
    assert "could not write the spool ([Errno 28] No space left on device): dropped 5 events" in caplog.text
    clock.now += 60
    deliverer.submit(events(5, 5))
    deliverer.step()
    assert service.delivered() == list(range(5, 10))
