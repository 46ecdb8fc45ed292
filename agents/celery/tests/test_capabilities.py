"""What the agent tells jobwatch it supports, when it tells it, and the answers that follow from it."""
from command_fakes import FakeApp, FakeJobwatch
from fake_remote import FakeRemote
from jobwatch_celery import __version__
from jobwatch_celery.capabilities import CONTROLS, capabilities_body
from jobwatch_celery.commands import CommandRunner

# the command types of jobwatch's agent command protocol (docs/api.md, "Agent commands")
PROTOCOL_TYPES = {"revoke", "retry", "promote", "delete", "kill", "queue.pause", "queue.resume", "queue.clean", "queue.retry_failed",
                  "queue.concurrency", "task.rate_limit", "worker.quiet", "worker.stop", "worker.pool"}
UNSUPPORTED_IN_CELERY = {"promote", "kill", "queue.retry_failed", "queue.concurrency"}


def test_every_type_of_the_protocol_is_reported_with_a_reason_for_what_celery_cannot_do():
    body = capabilities_body()
    assert body["framework"] == "celery" and body["agentVersion"] == __version__
    assert set(body["controls"]) == PROTOCOL_TYPES
    assert {kind for kind, support in body["controls"].items() if not support["supported"]} == UNSUPPORTED_IN_CELERY
    for kind in UNSUPPORTED_IN_CELERY:
        assert body["controls"][kind] == {"supported": False, "reason": CONTROLS[kind]} and 0 < len(CONTROLS[kind]) <= 1000
    assert all(support == {"supported": True} for kind, support in body["controls"].items() if kind not in UNSUPPORTED_IN_CELERY)


def test_capabilities_are_sent_at_start_and_again_after_an_outage_only():
    jobwatch = FakeJobwatch([])
    runner = CommandRunner(FakeApp(), jobwatch)
    runner.poll()
    runner.poll()
    assert jobwatch.capabilities == [capabilities_body()]
    jobwatch.down = True
    runner.poll()
    jobwatch.down = False
    runner.poll()
    runner.poll()
    assert len(jobwatch.capabilities) == 2


def test_capabilities_not_taken_for_a_passing_reason_are_sent_again_and_an_older_jobwatch_is_left_alone():
    jobwatch = FakeJobwatch([], capabilities_status=503)
    runner = CommandRunner(FakeApp(), jobwatch)
    runner.poll()
    runner.poll()
    assert len(jobwatch.capabilities) == 2
    jobwatch.capabilities_status = 404  # a jobwatch from before controls
    runner.poll()
    runner.poll()
    assert len(jobwatch.capabilities) == 3


def test_a_type_celery_cannot_do_is_answered_unsupported_with_the_reported_reason_and_celery_is_not_asked():
    commands = [{"id": f"c{i}", "type": kind, "externalId": "t1", "queue": "celery", "params": {"concurrency": 2}} for i, kind in enumerate(sorted(UNSUPPORTED_IN_CELERY))]
    jobwatch, remote, app = FakeJobwatch(commands), FakeRemote(), FakeApp()
    CommandRunner(app, jobwatch, remote=remote).poll()
    outcomes = jobwatch.acks[0]["outcomes"]
    assert [(o["status"], o["reason"]) for o in outcomes] == [("unsupported", CONTROLS[kind]) for kind in sorted(UNSUPPORTED_IN_CELERY)]
    assert remote.sent == [] and remote.asked == [] and app.revoked == [] and app.sent == []
