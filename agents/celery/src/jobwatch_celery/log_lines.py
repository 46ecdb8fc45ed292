"""One log line per message, whatever it carries.

Messages carry names from Celery and jobwatch (queue names, task ids, errors): a newline,
a NUL or an escape sequence in one must not end the line and forge the next. So every
control character of a formatted record (a traceback's newlines too) is written escaped.
"""
from __future__ import annotations

import logging
import re

LINE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# C0 and C1 controls, DEL, and the two Unicode line separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`, `\\u2028`)."""
    return _CONTROL.sub(lambda match: _SHORT.get(match.group(), f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else f"\\u{ord(match.group()):04x}"), text)


class OneLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


def configure(level: str) -> None:
    """The agent's logging: stderr, one escaped line per record."""
    logging.basicConfig(level=level, format=LINE_FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(OneLineFormatter(LINE_FORMAT))
