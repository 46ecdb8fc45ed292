"""A task's arguments and result as jobwatch takes them: `{"args": [...], "kwargs": {...}}`
(so `kwargs.invoice_id=INV-7` finds it) and the return value, read from the reprs task
events carry (repr_values.py) or from the values the result backend kept, masked (the
values of secret-looking keys, at any depth) and bounded (limits.py's PAYLOAD_BOUNDS); the
arguments of the tasks `--omit-args` names are never sent.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from .bound_json import bound_payload
from .redaction import DEFAULT_REDACT_KEYS, OmittedNames, Redactor
from .repr_values import parse_repr


class TaskValues:
    def __init__(self, redact_keys: Iterable[str] = DEFAULT_REDACT_KEYS, omit_args: Iterable[str] = ()) -> None:
        self.redactor = Redactor(redact_keys)
        self.omitted = OmittedNames(omit_args)

    def sends_args_of(self, name: object) -> bool:
        return name not in self.omitted

    def args_from_event(self, event: dict) -> Optional[Any]:
        """task-sent's and task-received's `args` and `kwargs` (reprs, cut at argsrepr_maxsize), None when the event has neither."""
        if event.get("args") is None and event.get("kwargs") is None:
            return None
        return self.args(self._read(event.get("args"), []), self._read(event.get("kwargs"), {}))

    def result_from_event(self, event: dict) -> Optional[Any]:
        """task-succeeded's `result` (a repr, cut at resultrepr_maxsize), None when it has none."""
        return None if event.get("result") is None else self.value(self._read(event["result"], None))

    def args(self, positional: Any, keyword: Any) -> Any:
        return bound_payload({"args": positional, "kwargs": keyword}, None, self.redactor)

    def value(self, value: Any) -> Any:
        return bound_payload(value, None, self.redactor)

    def _read(self, value: Any, absent: Any) -> Any:
        if value is None:
            return absent
        # Celery's events carry reprs; an event sent by other means may carry the values themselves
        return parse_repr(value, self.redactor) if isinstance(value, str) else value
