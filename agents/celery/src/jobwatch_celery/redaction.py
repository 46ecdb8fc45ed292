"""Which keys of a task's arguments and result hold secrets: their values are masked before
anything leaves the app's network (bound_json.py applies it while it bounds).

The rule is jobwatch's own, which masks again on ingest: a key matches when its letters and
digits, lower-cased, contain a pattern's (`apiKey`, `X-Api-Key` and `API_KEY` all match
`api_key`); a pattern of three characters or fewer must be a whole word of the key instead
(`ssn` matches `user_ssn` and `ssnLast4`, not `className`), words split at `_`, `-`, `.`,
spaces and lower-to-upper case changes. The same cases (agents/redaction-cases.json) run
against the three agents and the service.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, Pattern, Optional

DEFAULT_REDACT_KEYS = ("password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "credit_card", "card_number", "ssn")
# What a masked value becomes.
REDACTED = "[redacted]"
# Patterns this short match whole words only: as substrings they hit ordinary names.
_WORD_PATTERN_CHARS_MAX = 3
# Distinct keys whose verdict is remembered: a producer inventing keys cannot grow it past this.
_VERDICTS_MAX = 10_000
_NOT_LETTER_OR_DIGIT = re.compile(r"[^a-z0-9]")
_CASE_CHANGE = re.compile(r"([a-z0-9])([A-Z])")
_WORD_SEPARATORS = re.compile(r"[^a-z0-9]+")


def _compact(text: str) -> str:
    return _NOT_LETTER_OR_DIGIT.sub("", text.lower())


def _words_of(key: str) -> list:
    return [word for word in _WORD_SEPARATORS.split(_CASE_CHANGE.sub(r"\1 \2", key).lower()) if word]


class Redactor:
    def __init__(self, patterns: Iterable[str] = DEFAULT_REDACT_KEYS) -> None:
        self.patterns = list(patterns)
        compacted = [pattern for pattern in (_compact(each) for each in self.patterns) if pattern]
        self._substrings = [pattern for pattern in compacted if len(pattern) > _WORD_PATTERN_CHARS_MAX]
        self._words = {pattern for pattern in compacted if len(pattern) <= _WORD_PATTERN_CHARS_MAX}
        self._verdicts: Dict[str, bool] = {}

    def matches(self, key: str) -> bool:
        """Whether the value under `key` is masked."""
        verdict = self._verdicts.get(key)
        if verdict is None:
            letters = _compact(key)
            verdict = any(pattern in letters for pattern in self._substrings) or (bool(self._words) and any(word in self._words for word in _words_of(key)))
            if len(self._verdicts) >= _VERDICTS_MAX:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict


class OmittedNames:
    """Task names whose arguments are never sent (`--omit-args`): exact names, or with `*` standing for any run of characters (`billing.*`)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names = list(names)
        self._exact = {name for name in self.names if "*" not in name}
        globs = [name for name in self.names if "*" in name]
        self._glob: Optional[Pattern[str]] = (
            re.compile("(?:" + "|".join(".*".join(re.escape(part) for part in glob.split("*")) for glob in globs) + r")\Z", re.DOTALL) if globs else None
        )

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._exact or (self._glob is not None and self._glob.match(name) is not None))
