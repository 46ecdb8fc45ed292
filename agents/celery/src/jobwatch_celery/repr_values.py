"""A task's arguments and result as Celery's task events carry them: Python reprs, read back
into JSON values so jobwatch can show their structure, mask their secret-looking keys and
search `kwargs.invoice_id=INV-7`.

The producer writes `argsrepr` and `kwargsrepr` with Celery's `saferepr`, cut at
`argsrepr_maxsize`/`kwargsrepr_maxsize` (1,024 characters by default), and the worker the
result's with `resultrepr_maxsize`: what saferepr leaves out reads `...` (an item of a
list, or a container past its levels), which becomes "…[truncated]"; a string it cut ends
in `...` and stays so. Literals (strings, bytes, numbers, True, False, None, lists, tuples,
dicts, sets) become their JSON values; anything else (`datetime.datetime(2026, 1, 2, 0,
0)`, `<User object at 0x7f...>`) stays the text of its repr, unless an identifier in it
matches a secret pattern, in which case it is masked whole (an object's repr can show its
fields: `User(password='...')`). Text that is not a repr at all (an `argsrepr` the producer
chose) reads as far as it can, the rest as text; nothing here raises.
"""
from __future__ import annotations

import ast
import re
from typing import Any, List, Optional, Tuple

from .limits import TRUNCATED_MARK
from .redaction import REDACTED, Redactor

# Past this the text is cut before it is read (a producer can raise argsrepr_maxsize as far as it likes).
TEXT_CHARS_MAX = 1 << 20
# Deeper containers are kept as text: nothing a repr nests is worth a deep recursion.
DEPTH_MAX = 32
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)\Z")
_STRING_START = re.compile(r"[rRbBuU]{0,2}['\"]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORDS = {"True": True, "False": False, "None": None}


def parse_repr(text: str, redactor: Optional[Redactor] = None) -> Any:
    """`text` (a repr) as a JSON value; see the module's comment."""
    reader = _Reader(text[:TEXT_CHARS_MAX], redactor)
    value = reader.value(0)
    rest = reader.text[reader.at :].strip()
    if rest:  # more than one value: not a repr Celery wrote; keep it all as text
        return reader.opaque_value(text[:TEXT_CHARS_MAX].strip())
    return value


class _Reader:
    def __init__(self, text: str, redactor: Optional[Redactor]) -> None:
        self.text = text
        self.at = 0
        self.redactor = redactor

    def skip_space(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t\r\n":
            self.at += 1

    def value(self, depth: int) -> Any:
        self.skip_space()
        if self.at >= len(self.text):
            return TRUNCATED_MARK
        char = self.text[self.at]
        if char in "([{" and depth < DEPTH_MAX:
            return self.container(depth)
        if self.text.startswith("...", self.at):
            self.at += 3
            return TRUNCATED_MARK
        match = _STRING_START.match(self.text, self.at)
        if match is not None:
            return self.string(match.end() - 1)
        end = self.atom_end()
        token = self.text[self.at : end].strip()
        self.at = end
        if token in _WORDS:
            return _WORDS[token]
        if _NUMBER.match(token):
            return _number(token)
        return self.opaque_value(token)

    def container(self, depth: int) -> Any:
        opener = self.text[self.at]
        closer = _CLOSERS[opener]
        self.at += 1
        items: List[Any] = []
        entries: List[Tuple[Any, Any]] = []
        is_dict = False
        while True:
            self.skip_space()
            if self.at >= len(self.text):
                break  # cut short: what was read stands
            if self.text[self.at] == closer:
                self.at += 1
                break
            if self.text[self.at] == ",":  # an empty item (saferepr writes `16, , ...` where it cut)
                self.at += 1
                continue
            start = self.at
            item = self.value(depth + 1)
            self.skip_space()
            if opener == "{" and self.at < len(self.text) and self.text[self.at] == ":":
                self.at += 1
                is_dict = True
                entries.append((_key_of(item, self.text[start : self.at - 1]), self.value(depth + 1)))
            elif is_dict:
                entries.append((TRUNCATED_MARK, "more keys left out"))  # a dict's `...`: what saferepr left out
            else:
                items.append(item)
            self.skip_space()
            if self.at < len(self.text) and self.text[self.at] == ",":
                self.at += 1
            elif self.at < len(self.text) and self.text[self.at] != closer:
                # not a repr Celery wrote: the rest of this container as text
                end = max(self.atom_end(stop_at_comma=False), self.at + 1)  # at least a character: always onward
                items.append(self.opaque_value(self.text[self.at : end].strip()))
                self.at = end
        if is_dict or (opener == "{" and not items):
            return _dict_of(entries)
        if items == [TRUNCATED_MARK]:  # `[...]`, `{...}`: saferepr left the whole container out
            return TRUNCATED_MARK
        return items

    def string(self, quote_at: int) -> Any:
        quote = self.text[quote_at]
        position = quote_at + 1
        while position < len(self.text) and self.text[position] != quote:
            position += 2 if self.text[position] == "\\" else 1
        literal = self.text[self.at : position + 1]
        self.at = min(position + 1, len(self.text))
        if position >= len(self.text):  # cut short inside the string
            return self.text[quote_at + 1 :] + TRUNCATED_MARK
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            return literal[literal.index(quote) + 1 : -1]
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    def atom_end(self, stop_at_comma: bool = True) -> int:
        """Where a non-literal ends: the next `,` or `:` or closing bracket outside its own brackets and quotes."""
        depth = 0
        position = self.at
        quote = None
        while position < len(self.text):
            char = self.text[position]
            if quote is not None:
                if char == "\\":
                    position += 1
                elif char == quote:
                    quote = None
            elif char in "'\"":
                quote = char
            elif char in "([{<":
                depth += 1
            elif char in ")]}" or (char == ">" and depth > 0):
                if depth == 0:
                    return position
                depth -= 1
            elif depth == 0 and (char == ":" or (stop_at_comma and char == ",")):
                return position
            position += 1
        return position

    def opaque_value(self, token: str) -> Any:
        """A repr that is no literal: its text, masked whole when a name in it looks secret."""
        if self.redactor is not None and any(self.redactor.matches(name) for name in _IDENTIFIER.findall(token)):
            return REDACTED
        return token


def _number(token: str) -> Any:
    try:
        return int(token)
    except ValueError:
        return float(token)


def _key_of(key: Any, text: str) -> str:
    return key if isinstance(key, str) else text.strip()


def _dict_of(entries: List[Tuple[Any, Any]]) -> dict:
    out: dict = {}
    for key, value in entries:
        out[key] = value
    return out
