"""The Celery agent's limits are agents/ingest-limits.json's (a bun test holds that file against
the service), and its bounding rule passes the cases every agent runs (agents/bounding-cases.json)."""
import json
import os

import pytest

from jobwatch_celery import limits
from jobwatch_celery.bound_json import bound_json, bound_payload
from jobwatch_celery.normalize import Normalizer
from jobwatch_celery.redaction import DEFAULT_REDACT_KEYS, REDACTED, Redactor

AGENTS = os.path.join(os.path.dirname(__file__), "..", "..")
with open(os.path.join(AGENTS, "ingest-limits.json"), encoding="utf-8") as file:
    FIXTURE = json.load(file)
with open(os.path.join(AGENTS, "bounding-cases.json"), encoding="utf-8") as file:
    CASES = json.load(file)


def test_the_field_limits_and_request_limits_are_the_fixtures():
    assert {
        "externalIdChars": limits.EXTERNAL_ID_CHARS,
        "nameChars": limits.NAME_CHARS,
        "queueChars": limits.QUEUE_CHARS,
        "workerIdChars": limits.WORKER_ID_CHARS,
        "hostnameChars": limits.HOSTNAME_CHARS,
        "errorChars": limits.ERROR_CHARS,
        "stacktraceChars": limits.STACKTRACE_CHARS,
        "queuesPerWorkerMax": limits.QUEUES_PER_WORKER_MAX,
    } == FIXTURE["fields"]
    assert list(limits.FORBIDDEN_KEYS) == FIXTURE["freeFormObject"]["forbiddenKeys"]
    assert {"eventsMax": limits.INGEST_EVENTS_MAX, "bodyBytesMax": limits.INGEST_BODY_BYTES_MAX} == FIXTURE["request"]


def test_the_agent_bounds_are_the_fixtures():
    assert {**limits.AGENT_BOUNDS, "truncatedMark": limits.TRUNCATED_MARK} == FIXTURE["agentBounds"]
    assert limits.PAYLOAD_BOUNDS == {key: FIXTURE["payloadBounds"][key] for key in limits.PAYLOAD_BOUNDS}
    assert list(DEFAULT_REDACT_KEYS) == FIXTURE["jobPayload"]["redactKeys"] and REDACTED == FIXTURE["jobPayload"]["redacted"]


@pytest.mark.parametrize("case", CASES["payloadCases"], ids=[case["name"] for case in CASES["payloadCases"]])
def test_the_shared_payload_bounding_cases(case):
    assert bound_payload(case["input"], {**CASES["payloadBounds"], **case.get("bounds", {})}, Redactor()) == case["expected"]


@pytest.mark.parametrize("case", CASES["cases"], ids=[case["name"] for case in CASES["cases"]])
def test_the_shared_bounding_cases(case):
    assert bound_json(case["input"], {**CASES["bounds"], **case.get("bounds", {})}) == case["expected"]


def test_the_shared_cut_cases():
    for case in CASES["cutMarked"]:
        assert limits.cut_marked(case["text"], case["limit"]) == case["expected"], case


def _depth(value, level=1):
    if isinstance(value, dict):
        return max([level] + [_depth(item, level + 1) for item in value.values()])
    if isinstance(value, list):
        return max([level] + [_depth(item, level + 1) for item in value])
    return 0


def test_the_worst_a_producer_can_put_in_a_value_is_bounded_within_the_services_limits():
    nasty = '\x00"\\\u2028😀\ud800' * 2000
    deep = "bottom"
    for level in range(500):
        deep = [deep] if level % 2 == 0 else {f"k{level}": deep}
    wide = {"list": [nasty] * 300, **{f"{nasty[:400]}{index}": [nasty] * 3 for index in range(300)}}
    for value in (wide, {"deep": deep}, {"__proto__": 1, "list": list(range(100_000)), 3: float("nan")}):
        bounded = bound_json(value)
        text = json.dumps(bounded, ensure_ascii=False, separators=(",", ":"))
        assert len(text.encode()) <= FIXTURE["agentBounds"]["bytesMax"]
        assert _depth(bounded) <= FIXTURE["freeFormObject"]["depthMax"]
        assert not set(FIXTURE["freeFormObject"]["forbiddenKeys"]) & set(json.loads(text))


def test_a_root_id_of_40_nested_lists_is_bounded_in_every_event_of_the_task():
    nested = 1
    for _ in range(40):
        nested = [nested]
    n = Normalizer("c")
    [event] = n.normalize({"type": "task-received", "uuid": "t1", "name": "app.add", "root_id": nested, "timestamp": 1_800_000_000.0})
    kept = event["job"]["extensions"]["rootId"]
    for _ in range(2, 9):  # extensions is level 1, rootId level 2: six more lists, then the mark
        kept = kept[0]
    assert kept == "…[truncated: deeper than 8 levels]"
    [started] = n.normalize({"type": "task-started", "uuid": "t1", "timestamp": 1_800_000_001.0, "hostname": "w1"})
    assert _depth(started["job"]["extensions"]) <= 8
