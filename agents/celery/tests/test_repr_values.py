"""Task events carry arguments and results as Celery's saferepr text: read back as JSON values,
what saferepr left out marked, reprs that are no literals kept as text (masked when a name in
them looks secret), and any text at all read without raising."""
import pytest
from celery.utils.saferepr import saferepr

from jobwatch_celery.redaction import Redactor
from jobwatch_celery.repr_values import parse_repr

MARK = "…[truncated]"


@pytest.mark.parametrize(
    "text, value",
    [
        ("(42, 'x', None, True, -1.5)", [42, "x", None, True, -1.5]),
        ("(1,)", [1]),
        ("()", []),
        ("{'invoice_id': 'INV-7', 'lines': [{'sku': 'A-1', 'qty': 2}]}", {"invoice_id": "INV-7", "lines": [{"sku": "A-1", "qty": 2}]}),
        ("{1: 'a', (1, 2): 'b', None: 'c'}", {"1": "a", "(1, 2)": "b", "None": "c"}),
        ("[b'raw', 'it\\'s', \"q\\\"d\", '\\u00e9\\n']", ["raw", "it's", 'q"d', "é\n"]),
        ("{1, 2}", [1, 2]),
        ("{}", {}),
        ("'ok'", "ok"),
    ],
)
def test_literals_become_their_json_values(text, value):
    assert parse_repr(text) == value


def test_what_saferepr_left_out_is_marked():
    # its item limit, its levels, and its cut of long strings and of the whole repr
    assert parse_repr(saferepr([list(range(100))] * 5, 60)) == [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, MARK]]
    assert parse_repr(saferepr(((1, {"password": "x", "nested": [{"deep": 1}]}),), 1024)) == [[1, {"password": "x", "nested": MARK}]]
    long = parse_repr(saferepr({"a": "x" * 2000, "b": 1}, 100))
    assert long["a"].endswith("...") and long[MARK] == "more keys left out"
    assert parse_repr("{'a': 'cut here") == {"a": "cut here" + MARK}
    assert parse_repr("(1, 2") == [1, 2]


def test_reprs_that_are_no_literals_stay_text_masked_whole_when_a_name_in_them_looks_secret():
    text = "{'when': datetime.datetime(2026, 1, 2, 0, 0), 'price': Decimal('1.50'), 'user': User(name='ada', password='p'), 'o': <app.Token object at 0x7f>}"
    assert parse_repr(text, Redactor()) == {"when": "datetime.datetime(2026, 1, 2, 0, 0)", "price": "Decimal('1.50')", "user": "[redacted]", "o": "[redacted]"}
    assert parse_repr("[User(password='p')]") == ["User(password='p')"]  # no redactor: nothing masked here


@pytest.mark.parametrize("text", ["", ")))", "((((", "{'a' 'b'}", "[1 2 3]", "{:}", "'", "hello world", "(" * 5000 + ")" * 10, "<x>", "a > b", "[1, ), 2]"])
def test_any_text_is_read_without_raising_and_always_onward(text):
    parse_repr(text, Redactor())
