"""What the agent tells jobwatch a command came to: done, failed (why) or unsupported (why Celery cannot)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Union

from .limits import cut_marked

REASON_CHARS = 1000
# jobwatch takes a few named figures or words beside an outcome
DETAILS_KEYS_MAX = 16
DETAILS_TEXT_CHARS = 200
NOT_FOUND = "not found"

Detail = Union[int, float, str, bool, None]


@dataclass
class Outcome:
    id: str
    status: str  # "done" | "failed" | "unsupported"
    reason: Optional[str] = None
    details: Optional[Dict[str, Detail]] = None

    def to_json(self) -> dict:
        body: dict = {"id": self.id, "status": self.status}
        if self.reason is not None:
            body["reason"] = cut_marked(self.reason, REASON_CHARS)
        if self.details:
            body["details"] = {
                key[:64]: cut_marked(value, DETAILS_TEXT_CHARS) if isinstance(value, str) else value
                for key, value in list(self.details.items())[:DETAILS_KEYS_MAX]
            }
        return body


def done(command_id: str, reason: Optional[str] = None, **details: Detail) -> Outcome:
    return Outcome(command_id, "done", reason, details or None)


def failed(command_id: str, reason: str, **details: Detail) -> Outcome:
    return Outcome(command_id, "failed", reason, details or None)


def not_found(command_id: str, why: str) -> Outcome:
    """The job system no longer has (or never had) what the command names."""
    return Outcome(command_id, "failed", f"{NOT_FOUND}: {why}")


def unsupported(command_id: str, reason: str) -> Outcome:
    return Outcome(command_id, "unsupported", reason)
