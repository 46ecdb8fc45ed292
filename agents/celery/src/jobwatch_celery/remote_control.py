"""Celery's remote control (`app.control`), asked for replies and read as confirmations.

A control command is a broadcast on the broker: it reaches every worker named in its
destination, and each answers `{"ok": ...}` or `{"error": ...}`. A worker that does not
answer within the wait may be offline, busy or gone; the command then did not happen as
far as anyone can tell, so it is reported as unconfirmed, never as done. A broadcast
names its workers, so the wait ends as soon as all of them answered.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from celery import Celery
from kombu.exceptions import OperationalError

# A worker answers a control command within milliseconds when it is healthy; a loaded
# machine can take a second or two. Only a worker that does not answer costs the full wait.
REPLY_TIMEOUT_S = 5.0
# A question to every worker (which queues each consumes) has no known count of answers,
# so it always lasts this long: the same wait the agent uses for its worker refresh.
SURVEY_TIMEOUT_S = 1.0


class BrokerUnavailable(Exception):
    """Celery could not hand the command to the broker: try again at the next poll."""


@dataclass
class Replies:
    """What the workers a command was sent to answered."""

    ok: Dict[str, str] = field(default_factory=dict)
    errors: Dict[str, str] = field(default_factory=dict)
    silent: List[str] = field(default_factory=list)

    @property
    def all_ok(self) -> bool:
        return not self.errors and not self.silent

    def problem(self, timeout_s: float = REPLY_TIMEOUT_S) -> Optional[str]:
        """Why the command is not confirmed by every worker it was sent to, or None."""
        parts = [f"{host} refused: {message}" for host, message in sorted(self.errors.items())]
        if self.silent:
            parts.append(f"no answer within {timeout_s:g}s from {', '.join(sorted(self.silent))}")
        return "; ".join(parts) or None


class RemoteControl:
    def __init__(self, app: Celery, reply_timeout_s: float = REPLY_TIMEOUT_S, survey_timeout_s: float = SURVEY_TIMEOUT_S) -> None:
        self.app = app
        self.reply_timeout_s = reply_timeout_s
        self.survey_timeout_s = survey_timeout_s

    def command(self, name: str, arguments: dict, hosts: Sequence[str]) -> Replies:
        """Sends a control command to `hosts` and waits for their answers."""
        hosts = list(dict.fromkeys(hosts))
        try:
            answers = self.app.control.broadcast(name, arguments=arguments, destination=hosts, reply=True, timeout=self.reply_timeout_s, limit=len(hosts))
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        replies = Replies()
        for answer in answers or []:
            for host, reply in (answer.items() if isinstance(answer, dict) else ()):
                if host not in hosts:
                    continue
                if isinstance(reply, dict) and "ok" in reply:
                    replies.ok[host] = str(reply["ok"])
                else:
                    error = reply.get("error") if isinstance(reply, dict) else reply
                    replies.errors[host] = str(error)[:300]
        replies.silent = [host for host in hosts if host not in replies.ok and host not in replies.errors]
        return replies

    def send(self, name: str, hosts: Sequence[str]) -> None:
        """Sends a control command that no worker answers (shutdown: the worker stops before it could)."""
        try:
            self.app.control.broadcast(name, arguments={}, destination=list(hosts), reply=False)
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error

    def ask(self, method: str, hosts: Optional[Sequence[str]] = None, *args: object) -> Dict[str, object]:
        """An inspect question (`active_queues`, `stats`, `registered`, ...): host -> answer.

        Without `hosts` every worker is asked and the wait is the survey's; with them, the
        wait ends when they all answered."""
        if hosts is not None:
            hosts = list(dict.fromkeys(hosts))
            inspect = self.app.control.inspect(destination=hosts, timeout=self.reply_timeout_s, limit=len(hosts))
        else:
            inspect = self.app.control.inspect(timeout=self.survey_timeout_s)
        try:
            answers = getattr(inspect, method)(*args) or {}
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        return {host: answer for host, answer in answers.items() if hosts is None or host in hosts}

    def answering(self, hosts: Sequence[str], timeout_s: float) -> List[str]:
        """Which of `hosts` answer a ping within `timeout_s`."""
        try:
            answers = self.app.control.ping(destination=list(hosts), timeout=timeout_s, limit=len(hosts))
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        return [host for answer in answers or [] for host in (answer if isinstance(answer, dict) else {}) if host in hosts]
