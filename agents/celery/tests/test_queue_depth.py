"""Queue snapshots: every known queue, an unchanged depth only once a minute."""
from jobwatch_celery.normalize import WorkerInfo
from jobwatch_celery.queue_depth import QueueMonitor


class FakeBroker(QueueMonitor):
    def __init__(self, depths, **kwargs):
        info = WorkerInfo()
        info.queues = {"w1@host": ["celery", "mail"], "w2@host": ["celery"]}
        super().__init__(app=None, worker_info=info, queues_from_events=lambda: ["reports", "celery"], connection_id="c1", **kwargs)
        self.depths = depths
        self.now = 0.0
        self.clock = lambda: self.now

    def _depths(self, names):
        return {name: (self.depths[name], None) for name in names}


def test_every_known_queue_with_its_consumers():
    monitor = FakeBroker({"celery": 3, "mail": 0, "reports": 7, "extra": 1}, named_queues=["extra"])
    events = monitor.snapshots()
    queues = {e["queue"]["name"]: e["queue"] for e in events}
    running = {"paused": False}
    assert queues == {
        "extra": {"name": "extra", "depth": 1, "extensions": running},
        "celery": {"name": "celery", "depth": 3, "consumers": 2, "extensions": running},
        "mail": {"name": "mail", "depth": 0, "consumers": 1, "extensions": running},
        "reports": {"name": "reports", "depth": 7, "extensions": running},
    }
    assert all(e["type"] == "queue_snapshot" and e["connectionId"] == "c1" and e["framework"] == "celery" for e in events)


def test_an_unchanged_queue_is_resent_only_after_a_minute():
    monitor = FakeBroker({"celery": 3, "mail": 0, "reports": 7})
    assert len(monitor.snapshots()) == 3
    monitor.now = 2.0
    monitor.depths["celery"] = 4
    assert [e["queue"]["name"] for e in monitor.snapshots()] == ["celery"]
    monitor.now = 61.0
    assert sorted(e["queue"]["name"] for e in monitor.snapshots()) == ["mail", "reports"]  # celery changed at 2 s


def test_a_paused_queue_says_so_and_is_reported_even_when_nothing_else_names_it():
    paused = ["mail", "parked"]
    monitor = FakeBroker({"celery": 3, "mail": 0, "reports": 7, "parked": 4}, paused=lambda: paused)
    queues = {e["queue"]["name"]: e["queue"] for e in monitor.snapshots()}
    assert {name: q["extensions"]["paused"] for name, q in queues.items()} == {"celery": False, "mail": True, "reports": False, "parked": True}
    assert queues["parked"]["depth"] == 4


def test_a_pause_or_resume_is_sent_at_once_not_after_the_minute():
    paused = []
    monitor = FakeBroker({"celery": 3, "mail": 0, "reports": 7}, paused=lambda: paused)
    monitor.snapshots()
    monitor.now = 2.0
    paused.append("celery")
    [event] = monitor.snapshots()
    assert event["queue"] == {"name": "celery", "depth": 3, "consumers": 2, "extensions": {"paused": True}}
    monitor.now = 4.0
    paused.clear()
    assert [e["queue"]["extensions"] for e in monitor.snapshots()] == [{"paused": False}]
