"""The Celery agent masks exactly the keys agents/redaction-cases.json says, as the other agents
and the service do (a bun test runs the same cases through the service's ingest), and leaves
out the arguments of the tasks --omit-args names."""
import json
import os

import pytest

from jobwatch_celery.bound_json import bound_payload
from jobwatch_celery.redaction import OmittedNames, Redactor

with open(os.path.join(os.path.dirname(__file__), "..", "..", "redaction-cases.json"), encoding="utf-8") as file:
    CASES = json.load(file)
VALUE_CASES = [{**case, "patterns": CASES["patterns"]} for case in CASES["values"]] + CASES["customPatterns"]


@pytest.mark.parametrize("case", CASES["keys"], ids=[repr(case["key"]) for case in CASES["keys"]])
def test_which_keys_are_masked(case):
    assert Redactor(CASES["patterns"]).matches(case["key"]) is case["masked"]


@pytest.mark.parametrize("case", VALUE_CASES, ids=[case["name"] for case in VALUE_CASES])
def test_what_a_value_becomes(case):
    assert bound_payload(case["input"], None, Redactor(case["patterns"])) == case["expected"]


def test_omitted_names_are_exact_or_globs():
    omitted = OmittedNames(["tasks.login", "billing.*"])
    assert "tasks.login" in omitted and "billing.charge" in omitted and "billing." in omitted
    assert "tasks.login2" not in omitted and "billingx" not in omitted and "tasks.Login" not in omitted and None not in omitted
    assert "anything" not in OmittedNames([])
    assert "anything" in OmittedNames(["*"])
