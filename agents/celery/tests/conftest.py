import os
import sys

# The tests run from a checkout without installing the package.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import pytest


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Lets a fixture see whether its test failed (the end-to-end test prints the processes' logs then).
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)
