"""What a command may name: checked before anything reaches Celery."""
import pytest

from jobwatch_celery.command_inputs import params_of, pool_delta_problem, queue_problem, rate_problem, task_name_problem, worker_problem


@pytest.mark.parametrize("check, limit", [(queue_problem, 255), (task_name_problem, 1024), (worker_problem, 512)])
def test_names_are_strings_within_jobwatchs_limit_without_control_characters(check, limit):
    assert check("celery@host.example") is None
    assert check("é" * limit) is None
    assert check("😀" * (limit // 2)) is None  # two UTF-16 units each, as jobwatch counts
    for bad in ("", None, 7, ["celery"], "a" * (limit + 1), "😀" * (limit // 2 + 1), "mail\nFORGED", "mail\x1b[31m", "mail\x85"):
        assert check(bad) is not None, bad


@pytest.mark.parametrize("check, limit", [(queue_problem, 255), (worker_problem, 512)])
def test_a_name_jobwatch_cut_short_names_nothing(check, limit):
    cut = "q" * (limit - len("…[truncated]")) + "…[truncated]"
    assert "cut to" in check(cut)
    assert check("q…[truncated]") is None  # a short name may end so


@pytest.mark.parametrize("rate", ["10/m", "0.5/s", "100", "3/h", None])
def test_celery_rates_and_null_are_accepted(rate):
    assert rate_problem(rate) is None


@pytest.mark.parametrize("rate", ["10/min", "10/d", "fast", "-1/s", "1e3/s", "", 10, "0", "0/m", "10/m\n"])
def test_anything_else_is_no_rate(rate):
    assert rate_problem(rate) is not None


def test_pool_deltas_are_non_zero_whole_numbers_within_a_hundred():
    assert pool_delta_problem(1) is None and pool_delta_problem(-100) is None and pool_delta_problem(2.0) is None
    for bad in (0, 101, -101, 1.5, True, "1", None, float("nan"), float("inf")):
        assert pool_delta_problem(bad) is not None, bad


def test_params_are_an_object_or_absent():
    assert params_of({}) == {} and params_of({"params": None}) == {} and params_of({"params": {"delta": 1}}) == {"delta": 1}
    assert params_of({"params": [1]}) is None and params_of({"params": "x"}) is None
