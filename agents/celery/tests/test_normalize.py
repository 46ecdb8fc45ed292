"""Celery native events -> ingest events, per the state mapping in this agent's README."""
from jobwatch_celery.limits import cut, cut_marked
from jobwatch_celery.normalize import Normalizer, WorkerInfo
from jobwatch_celery.task_facts import TaskFacts
from jobwatch_celery.task_values import TaskValues

CONN = "0190c0de-0000-7000-8000-000000000001"
T = 1_795_255_200.0  # 2026-11-21T10:00:00Z


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def task(kind, uuid="t1", at=T, **fields):
    return {"type": f"task-{kind}", "uuid": uuid, "timestamp": at, "hostname": "w1@host", **fields}


def jobs(events):
    return [e["job"] for e in events]


def test_every_task_event_kind_maps_to_its_unified_state():
    n = Normalizer(CONN)
    out = []
    out += n.normalize(task("sent", at=T, name="app.add", queue="mail", retries=0, hostname="producer"))
    out += n.normalize(task("received", at=T + 1, name="app.add", retries=0))
    out += n.normalize(task("started", at=T + 2))
    out += n.normalize(task("succeeded", at=T + 5, runtime=3.0, result="3"))
    out += n.normalize(task("received", uuid="t2", name="app.x"))
    out += n.normalize(task("failed", uuid="t2", at=T + 1, exception="ValueError('boom')", traceback="Traceback ..."))
    out += n.normalize(task("retried", uuid="t2", at=T + 2, exception="Retry in 1s", traceback="tb"))
    out += n.normalize(task("revoked", uuid="t2", at=T + 3, terminated=True, signum=15, expired=False))
    out += n.normalize(task("rejected", uuid="t2", at=T + 4, requeue=False))
    assert [j["state"] for j in jobs(out)] == ["queued", "queued", "active", "completed", "queued", "failed", "retrying", "cancelled", "cancelled"]
    assert all(e["type"] == "job_state_change" and e["framework"] == "celery" and e["connectionId"] == CONN for e in out)
    done = out[3]
    assert done["timestamp"] == "2026-11-21T10:00:05.000Z"
    assert done["job"] == {
        "externalId": "t1", "name": "app.add", "state": "completed", "queue": "mail", "workerId": "w1@host", "attempt": 1,
        "createdAt": "2026-11-21T10:00:00.000Z", "startedAt": "2026-11-21T10:00:02.000Z", "completedAt": "2026-11-21T10:00:05.000Z",
        "extensions": {"retries": 0, "runtime": 3.0}, "result": 3,
    }
    assert "workerId" not in out[0]["job"]  # task-sent's hostname is the producer, not a worker
    failed = out[5]["job"]
    assert failed["error"] == "ValueError('boom')" and failed["stacktrace"] == "Traceback ..." and failed["completedAt"]
    assert out[6]["job"]["error"] == "Retry in 1s" and "completedAt" not in out[6]["job"]
    assert out[7]["job"]["extensions"] == {"terminated": True, "signum": 15, "expired": False}
    assert out[8]["job"]["extensions"] == {"requeue": False}


def test_arguments_from_task_sent_and_task_received_and_the_result_from_task_succeeded_masked_and_searchable():
    n = Normalizer(CONN)
    [sent] = n.normalize(task("sent", name="app.charge", args="({'owner': 'ada', 'login': {'password': 'p'}}, 12.5)",
                              kwargs="{'invoice_id': 'INV-7', 'card': {'card_number': '4242'}}", hostname="producer"))
    [received] = n.normalize(task("received", name="app.charge", args="(...)", kwargs="{}", at=T + 1))
    [started] = n.normalize(task("started", at=T + 2))
    [done] = n.normalize(task("succeeded", at=T + 3, result="{'ok': True, 'receipt': {'token': 't'}}"))
    assert sent["job"]["args"] == {"args": [{"owner": "ada", "login": {"password": "[redacted]"}}, 12.5],
                                   "kwargs": {"invoice_id": "INV-7", "card": {"card_number": "[redacted]"}}}
    assert received["job"]["args"] == {"args": "…[truncated]", "kwargs": {}}  # saferepr left everything out
    assert "args" not in started["job"] and "result" not in started["job"]
    assert done["job"]["result"] == {"ok": True, "receipt": {"token": "[redacted]"}}


def test_omit_args_leaves_out_the_arguments_of_the_tasks_it_names_and_redact_keys_replaces_the_patterns():
    n = Normalizer(CONN, values=TaskValues(redact_keys=["pin"], omit_args=["app.login", "billing.*"]))
    [login] = n.normalize(task("sent", uuid="t1", name="app.login", args="('ada', 'hunter2')", kwargs="{}"))
    [charge] = n.normalize(task("received", uuid="t2", name="billing.charge", args="(5,)", kwargs="{}"))
    [other] = n.normalize(task("received", uuid="t3", name="app.other", args="()", kwargs="{'pin': 1234, 'password': 'kept'}"))
    [done] = n.normalize(task("succeeded", uuid="t1", result="'logged in'"))
    assert "args" not in login["job"] and "args" not in charge["job"]
    assert other["job"]["args"] == {"args": [], "kwargs": {"pin": "[redacted]", "password": "kept"}}
    assert done["job"]["result"] == "logged in"  # only the arguments are left out


def test_an_event_held_for_its_tasks_name_is_masked_and_omitted_by_that_name_once_known():
    n = Normalizer(CONN, values=TaskValues(omit_args=["app.login"]))
    assert n.normalize(task("started", uuid="t9", at=T + 1)) == []
    [started, received] = n.normalize(task("received", uuid="t9", name="app.login", args="('secret',)", kwargs="{}", at=T))
    assert [started["job"]["state"], received["job"]["state"]] == ["active", "queued"]
    assert received["job"]["name"] == "app.login" and "args" not in received["job"] and "args" not in started["job"]


def test_an_eta_in_the_future_is_scheduled_and_lifted_into_extensions():
    n = Normalizer(CONN)
    eta = "2026-11-21T10:01:00+00:00"
    [sent] = n.normalize(task("sent", name="app.later", eta=eta, at=T))
    [received] = n.normalize(task("received", name="app.later", eta=eta, at=T + 1))
    [due] = n.normalize(task("received", uuid="t2", name="app.now", eta="2026-11-21T09:59:00", at=T))
    assert sent["job"]["state"] == "scheduled" and received["job"]["state"] == "scheduled"
    assert sent["job"]["extensions"]["eta"] == eta
    assert due["job"]["state"] == "queued"  # an ETA already past (a naive one is UTC) is just queued


def test_retries_count_attempts_and_a_new_delivery_forgets_the_old_start():
    n = Normalizer(CONN)
    n.normalize(task("received", name="app.flaky", retries=0, at=T))
    n.normalize(task("started", at=T + 1))
    n.normalize(task("retried", at=T + 2, exception="Retry"))
    [again] = n.normalize(task("received", name="app.flaky", retries=1, at=T + 3))
    [ran] = n.normalize(task("started", at=T + 4))
    assert again["job"]["attempt"] == 2 and "startedAt" not in again["job"]
    assert ran["job"]["startedAt"] == "2026-11-21T10:00:04.000Z" and ran["job"]["attempt"] == 2


def test_a_retry_reported_after_its_resend_belongs_to_the_run_that_raised_it():
    # Celery publishes the retry's message (task-sent, task-received with retries + 1) before the pool reports task-retried
    n = Normalizer(CONN)
    n.normalize(task("received", name="app.flaky", retries=0, at=T))
    n.normalize(task("started", at=T + 1))
    [resent] = n.normalize(task("sent", name="app.flaky", retries=1, at=T + 2, hostname="w1@host"))
    [received] = n.normalize(task("received", name="app.flaky", retries=1, at=T + 2.1))
    [retried] = n.normalize(task("retried", at=T + 2.2, exception="Retry in 1s"))
    [started] = n.normalize(task("started", at=T + 3))
    assert [resent["job"]["attempt"], received["job"]["attempt"], retried["job"]["attempt"], started["job"]["attempt"]] == [2, 2, 1, 2]
    assert retried["job"]["error"] == "Retry in 1s"


def test_events_for_a_task_whose_name_is_not_known_yet_wait_for_it():
    clock = FakeClock()
    n = Normalizer(CONN, clock=clock)
    assert n.normalize(task("started", at=T + 2)) == []  # arrived before task-received
    assert n.normalize(task("succeeded", at=T + 3, runtime=1.0)) == []
    assert n.held == 2
    out = n.normalize(task("received", name="app.add", queue="q", at=T + 1))
    assert [(j["state"], j["name"]) for j in jobs(out)] == [("active", "app.add"), ("completed", "app.add"), ("queued", "app.add")]
    assert n.held == 0


def test_task_sent_stamped_after_the_worker_started_is_moved_before_it():
    # The producer stamps task-sent after publishing; a fast worker can start the task first.
    n = Normalizer(CONN)
    n.normalize(task("received", name="app.add", at=T + 1))
    n.normalize(task("started", at=T + 2))
    [sent] = n.normalize(task("sent", name="app.add", queue="mail", at=T + 3, hostname="producer"))
    assert sent["timestamp"] == "2026-11-21T10:00:00.999Z" and sent["job"]["state"] == "queued"
    assert sent["job"]["createdAt"] == "2026-11-21T10:00:00.999Z" and sent["job"]["queue"] == "mail"
    [done] = n.normalize(task("succeeded", at=T + 4, runtime=2.0))
    assert done["job"]["createdAt"] == "2026-11-21T10:00:00.999Z"


def test_a_retrys_resend_keeps_its_own_time_and_the_first_dispatch_stays_createdAt():
    n = Normalizer(CONN)
    n.normalize(task("sent", name="app.flaky", retries=0, at=T, hostname="producer"))
    n.normalize(task("received", name="app.flaky", retries=0, at=T + 1))
    n.normalize(task("started", at=T + 2))
    # the retry's message, sent by the task itself, with an ETA
    [resent] = n.normalize(task("sent", name="app.flaky", retries=1, eta="2026-11-21T10:00:10+00:00", at=T + 3, hostname="w1@host"))
    assert resent["timestamp"] == "2026-11-21T10:00:03.000Z" and resent["job"]["state"] == "scheduled"
    assert resent["job"]["createdAt"] == "2026-11-21T10:00:00.000Z" and resent["job"]["attempt"] == 2
    # a fast worker reports the retry's delivery before its task-sent arrives: that send moves before it
    n.normalize(task("received", uuid="t9", name="app.flaky", retries=0, at=T))
    n.normalize(task("received", uuid="t9", name="app.flaky", retries=1, at=T + 5))
    [late] = n.normalize(task("sent", uuid="t9", name="app.flaky", retries=1, at=T + 6, hostname="w1@host"))
    assert late["timestamp"] == "2026-11-21T10:00:04.999Z"


def test_a_name_that_never_comes_is_sent_as_unknown_after_the_wait():
    clock = FakeClock()
    n = Normalizer(CONN, name_wait_s=2.0, clock=clock)
    n.normalize(task("succeeded", at=T + 3, runtime=1.5))
    clock.now = 1.0
    assert n.release_overdue() == []
    clock.now = 2.5
    [late] = n.release_overdue()
    assert late["job"]["name"] == "unknown" and late["job"]["state"] == "completed"
    # startedAt comes from Celery's runtime when task-started was missed
    assert late["job"]["startedAt"] == "2026-11-21T10:00:01.500Z"
    assert n.sent_unnamed == 1 and n.held == 0


def test_a_name_celery_tells_when_asked_is_used_and_remembered():
    clock = FakeClock()
    n = Normalizer(CONN, name_wait_s=2.0, clock=clock)
    n.normalize(task("started", uuid="a", at=T))
    n.normalize(task("started", uuid="b", at=T))
    clock.now = 3.0
    assert n.overdue() == ["a", "b"]
    out = n.release_overdue({"a": "app.found"})
    assert [(e["job"]["externalId"], e["job"]["name"]) for e in out] == [("a", "app.found"), ("b", "unknown")]
    assert n.sent_unnamed == 1
    [later] = n.normalize(task("succeeded", uuid="a", at=T + 1))
    assert later["job"]["name"] == "app.found"  # remembered: no second wait


def test_held_events_are_bounded():
    n = Normalizer(CONN, held_max=3, clock=FakeClock())
    for i in range(5):
        n.normalize(task("started", uuid=f"t{i}"))
    released = n.release_overdue()
    assert len(released) == 2 and n.held == 3  # the oldest go out unnamed rather than grow memory


def test_the_fact_cache_is_bounded_and_forgets_the_least_recently_used():
    facts = TaskFacts(tasks_max=2)
    n = Normalizer(CONN, facts=facts)
    n.normalize(task("received", uuid="a", name="app.a"))
    n.normalize(task("received", uuid="b", name="app.b"))
    n.normalize(task("started", uuid="a"))  # touches a
    n.normalize(task("received", uuid="c", name="app.c"))  # evicts b
    assert len(facts) == 2 and facts.name_of("b") is None and facts.name_of("a") == "app.a" and facts.forgotten == 1


def test_error_and_traceback_are_cut_to_the_ingest_limits_in_utf16_units_with_a_visible_mark():
    n = Normalizer(CONN)
    n.normalize(task("received", name="app.x"))
    [failed] = n.normalize(task("failed", exception="é" * 20_000, traceback="😀" * 30_000))
    assert len(failed["job"]["error"]) == 10_000 and failed["job"]["error"].endswith("…[truncated]")
    # each emoji is two UTF-16 units: 49,988 units of emoji (24,994 of them) and the 12-unit mark
    assert failed["job"]["stacktrace"] == "😀" * 24_994 + "…[truncated]"
    assert len(failed["job"]["stacktrace"].encode("utf-16-le")) == 100_000


def test_cut_never_splits_a_surrogate_pair():
    assert cut("a😀", 2) == "a"
    assert cut("a😀", 3) == "a😀"
    assert cut("short", 10) == "short"


def test_worker_events_carry_hostname_pid_active_count_and_metadata():
    info = WorkerInfo()
    info.queues["w1@host"] = ["celery", "mail"]
    info.concurrency["w1@host"] = 4
    n = Normalizer(CONN, worker_info=info)
    base = {"hostname": "w1@host", "timestamp": T, "pid": 4242, "sw_ident": "py-celery", "sw_ver": "5.2.6", "sw_sys": "Linux", "freq": 2.0, "loadavg": [0.1, 0.2, 0.3]}
    [online] = n.normalize({**base, "type": "worker-online"})
    [busy] = n.normalize({**base, "type": "worker-heartbeat", "active": 2, "processed": 10})
    [idle] = n.normalize({**base, "type": "worker-heartbeat", "active": 0, "processed": 12})
    [offline] = n.normalize({**base, "type": "worker-offline"})
    assert [e["worker"]["state"] for e in (online, busy, idle, offline)] == ["online", "busy", "idle", "offline"]
    assert busy["type"] == "worker_state_change"
    assert busy["worker"] == {
        "externalId": "w1@host", "hostname": "w1@host", "state": "busy", "pid": 4242, "activeJobs": 2, "queues": ["celery", "mail"], "concurrency": 4,
        "metadata": {"sw_ident": "py-celery", "sw_ver": "5.2.6", "sw_sys": "Linux", "freq": 2.0, "loadavg": [0.1, 0.2, 0.3], "processed": 10},
    }
    assert offline["worker"]["activeJobs"] == 0


def test_unknown_and_malformed_events_are_ignored_and_counted():
    n = Normalizer(CONN)
    assert n.normalize({"type": "task-custom-progress", "uuid": "t1"}) == []
    assert n.normalize({"type": "task-started"}) == []  # no uuid
    assert n.normalize({"type": "worker-heartbeat"}) == []  # no hostname
    assert n.ignored == 3


def test_queues_named_by_events_are_remembered_for_depth_snapshots():
    n = Normalizer(CONN)
    n.normalize(task("sent", name="app.a", queue="mail"))
    n.normalize(task("sent", uuid="t2", name="app.b", queue="reports"))
    assert list(n.queues_seen) == ["mail", "reports"]


def test_unchanged_heartbeats_go_every_other_one_changes_at_once():
    n = Normalizer(CONN)
    beat = lambda at, active: n.normalize({"type": "worker-heartbeat", "hostname": "w1@host", "timestamp": T + at, "active": active})  # noqa: E731
    sent = [at for at, active in [(0, 0), (2, 0), (4, 0), (5, 1), (6, 1), (7.9, 1), (8.05, 1), (10, 0)] if beat(at, active)]
    # 2 s after a sent one: skipped; 4 s: sent (jobwatch's offline timeout is 6 s); a change in active: sent at once
    assert sent == [0, 4, 5, 8.05, 10]
    assert n.heartbeats_skipped == 3
    [online] = n.normalize({"type": "worker-online", "hostname": "w1@host", "timestamp": T + 10.5})
    assert online["worker"]["state"] == "online"  # never skipped


def test_a_tasks_parent_and_root_are_sent_as_its_relations_and_a_root_names_none():
    n = Normalizer(CONN)
    [root] = n.normalize(task("sent", uuid="first", name="app.a", root_id="first", parent_id=None))
    [child] = n.normalize(task("sent", uuid="second", name="app.b", root_id="first", parent_id="first", group="g-1"))
    [started] = n.normalize(task("started", uuid="second", at=T + 1))  # a worker's event: the relations come from what was learned
    assert "parentExternalId" not in root["job"] and "rootExternalId" not in root["job"]
    for event in (child, started):
        assert event["job"]["parentExternalId"] == "first" and event["job"]["rootExternalId"] == "first"
    assert child["job"]["extensions"]["groupId"] == "g-1"
    # a producer's root id that is not a string stays in extensions only; a long one is cut like an externalId
    [odd] = n.normalize(task("sent", uuid="third", name="app.c", root_id=[["nested"]], parent_id="p" * 600))
    assert "rootExternalId" not in odd["job"] and odd["job"]["extensions"]["rootId"] == [["nested"]]
    assert odd["job"]["parentExternalId"] == cut_marked("p" * 600, 512)
