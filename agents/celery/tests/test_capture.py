"""The capture loop: reconnects with backoff that starts over after a good connection."""
import logging
import threading

from kombu.exceptions import OperationalError

from jobwatch_celery.capture import Capture


class Script:
    """Plays one step per connection attempt: 'refused', or ('lost', seconds connected), or 'stop'."""

    def __init__(self, steps, stopping):
        self.steps = list(steps)
        self.stopping = stopping
        self.now = 0.0
        self.delays = []

    def clock(self):
        return self.now


class FakeConnection:
    def __init__(self, script):
        self.script = script

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def ensure_connection(self, max_retries):
        if self.script.steps[0] == "refused":
            self.script.steps.pop(0)
            raise OperationalError("Error 111 connecting. Connection refused.")

    def as_uri(self):
        return "redis://127.0.0.1:6379/0"


def receiver_for(script, events):
    class FakeReceiver:
        def __init__(self, connection, handlers, app):
            self.handlers = handlers
            self.should_stop = False

        def capture(self, limit, timeout, wakeup):
            assert wakeup is True  # ask every worker for a heartbeat on (re)connect
            step = script.steps.pop(0)
            for event in events:
                self.handlers["*"](event)
            if step == "stop":
                script.stopping.set()
                return
            _, seconds = step
            script.now += seconds
            raise ConnectionError("Connection closed by server.")

    return FakeReceiver


class RecordingBackoff:
    def __init__(self, script):
        self.script = script
        self.failures = 0

    def next_delay(self, retry_after_s=None):
        self.failures += 1
        self.script.delays.append(self.failures)
        return 0.0

    def reset(self):
        self.failures = 0


def run(steps, events=()):
    stopping = threading.Event()
    script = Script(steps, stopping)
    app = type("App", (), {"connection_for_read": lambda self: FakeConnection(script)})()
    seen = []
    capture = Capture(app, seen.append, backoff=RecordingBackoff(script), receiver_class=receiver_for(script, events), clock=script.clock)
    capture.run(stopping)
    return script, seen, capture


def test_refused_and_short_connections_back_off_further_a_good_one_starts_over(caplog):
    caplog.set_level(logging.INFO)
    script, _, _ = run(["refused", "refused", ("lost", 1.0), ("lost", 30.0), "refused", "stop"])
    # failures 1, 2, 3 grow; the 30 s connection resets, so the next loss is failure 1 again, then 2
    assert script.delays == [1, 2, 3, 1, 2]
    messages = [r.getMessage() for r in caplog.records]
    assert sum("broker connection failed" in m for m in messages) == 3
    assert sum("broker connection lost" in m for m in messages) == 2
    assert sum(m.startswith("connected to broker") for m in messages) == 3


def test_every_event_reaches_the_handler_and_one_bad_event_does_not_stop_capture(caplog):
    events = [{"type": "task-started", "uuid": "a"}, {"type": "boom"}, {"type": "task-started", "uuid": "b"}]
    stopping = threading.Event()
    script = Script(["stop"], stopping)
    app = type("App", (), {"connection_for_read": lambda self: FakeConnection(script)})()
    seen = []

    def handler(event):
        if event["type"] == "boom":
            raise ValueError("odd event")
        seen.append(event["uuid"])

    capture = Capture(app, handler, backoff=RecordingBackoff(script), receiver_class=receiver_for(script, events), clock=script.clock)
    capture.run(stopping)
    assert seen == ["a", "b"] and capture.events_seen == 3
    assert "could not handle a boom event" in caplog.text
