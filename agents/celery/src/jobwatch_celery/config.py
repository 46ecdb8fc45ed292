"""Settings from flags and the environment; a bad value stops start-up naming the setting."""
from __future__ import annotations

import argparse
import os
import re
import signal
from dataclasses import dataclass
from typing import Mapping, Optional
from urllib.parse import urlparse

from .limits import INGEST_EVENTS_MAX
from .redaction import DEFAULT_REDACT_KEYS


class ConfigError(ValueError):
    """A setting has a value the agent cannot run with; the message names the setting."""


@dataclass(frozen=True)
class Config:
    broker: str
    url: str
    api_key: str
    connection_id: Optional[str]
    result_backend: Optional[str]
    batch_size: int
    flush_interval_s: float
    spool_dir: str
    spool_max_bytes: int
    queue_interval_s: float
    queues: tuple
    command_interval_s: float
    revoke_signal: str
    redact_keys: tuple
    omit_args: tuple
    log_level: str


# (flag, environment variable, default, help)
SETTINGS = [
    ("--broker", "CELERY_BROKER_URL", None, "Celery broker URL, e.g. redis://localhost:6379/0 (required)"),
    ("--url", "JOBWATCH_URL", None, "jobwatch base URL, e.g. http://localhost:3000 (required)"),
    ("--api-key", "JOBWATCH_API_KEY", None, "the connection's API key, sk_... (required)"),
    ("--connection-id", "JOBWATCH_CONNECTION_ID", None,
     "the connection's id; by default asked from jobwatch with the API key at start"),
    ("--result-backend", "CELERY_RESULT_BACKEND", None,
     "Celery result backend URL; retry reads a task's name, args, kwargs and queue from it "
     "(the app must set result_extended=True); without it retries are reported as not carried out"),
    ("--batch-size", "JOBWATCH_BATCH_SIZE", "1000", "events per ingest request, 1..1000"),
    ("--flush-interval", "JOBWATCH_FLUSH_INTERVAL", "0.25", "seconds between flushes, 0.01..0.25"),
    ("--spool-dir", "JOBWATCH_SPOOL_DIR", "./jobwatch-spool",
     "directory that keeps events while jobwatch is unreachable, and the queues jobwatch paused (kept across agent restarts)"),
    ("--spool-max-mb", "JOBWATCH_SPOOL_MAX_MB", "256", "spool bound in MB; past it the oldest events are dropped and logged"),
    ("--queue-interval", "JOBWATCH_QUEUE_INTERVAL", "2", "seconds between queue depth snapshots, 0.5..3600"),
    ("--queues", "JOBWATCH_QUEUES", None,
     "comma-separated queues to report depth for even before a worker consumes them or an event names them"),
    ("--command-interval", "JOBWATCH_COMMAND_INTERVAL", "1", "seconds between polls for commands (revoke, retry, queue and worker controls), 0.2..3600"),
    ("--revoke-signal", "JOBWATCH_REVOKE_SIGNAL", "SIGTERM", "signal that terminates a revoked running task (e.g. SIGKILL)"),
    ("--redact-keys", "JOBWATCH_REDACT_KEYS", ",".join(DEFAULT_REDACT_KEYS),
     "comma-separated key patterns whose values are masked in a task's arguments and result before they leave (none for none); replaces the default list"),
    ("--omit-args", "JOBWATCH_OMIT_ARGS", None,
     "task names whose arguments are never sent (several after the flag, the flag repeated, or comma-separated); * matches any characters (billing.*)"),
    ("--log-level", "JOBWATCH_LOG_LEVEL", "INFO", "DEBUG, INFO, WARNING or ERROR"),
]
# Flags that take one or more values, and may be repeated: their values add up.
LIST_FLAGS = ("--omit-args",)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jobwatch-celery",
        description="Streams a Celery cluster's task and worker events and queue depths to jobwatch, "
        "and carries revoke and retry commands from jobwatch back to Celery. "
        "Every flag can also be set by the environment variable named in its help.",
    )
    for flag, env, default, text in SETTINGS:
        shown = f" (default {default})" if default is not None else ""
        if flag in LIST_FLAGS:
            parser.add_argument(flag, default=None, nargs="+", action="extend", metavar="TASK", help=f"{text}; env {env}")
        else:
            parser.add_argument(flag, default=None, help=f"{text}{shown}; env {env}")
    return parser


def load_config(argv: Optional[list] = None, environ: Optional[Mapping[str, str]] = None) -> Config:
    environ = os.environ if environ is None else environ
    args = vars(build_parser().parse_args(argv))
    raw = {}
    for flag, env, default, _ in SETTINGS:
        key = flag[2:].replace("-", "_")
        value = args.get(key)
        if isinstance(value, list):
            value = ",".join(value)
        if value is None:
            value = environ.get(env) or default
        raw[flag] = value

    def required(flag: str, env: str) -> str:
        value = raw[flag]
        if not value:
            raise ConfigError(f"{flag} (or {env}) is required")
        return value

    broker = required("--broker", "CELERY_BROKER_URL")
    if "://" not in broker:
        raise ConfigError(f"--broker: {broker!r} is not a URL such as redis://host:6379/0")
    url = required("--url", "JOBWATCH_URL").rstrip("/")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(f"--url: {url!r} is not an http(s) URL such as http://localhost:3000")
    api_key = required("--api-key", "JOBWATCH_API_KEY")
    if not api_key.startswith("sk_"):
        raise ConfigError("--api-key: a jobwatch API key starts with sk_")
    revoke_signal = raw["--revoke-signal"].upper()
    if not revoke_signal.startswith("SIG"):
        revoke_signal = "SIG" + revoke_signal
    if not isinstance(getattr(signal, revoke_signal, None), signal.Signals):
        raise ConfigError(f"--revoke-signal: {raw['--revoke-signal']!r} is not a signal name such as SIGTERM or SIGKILL")
    log_level = raw["--log-level"].upper()
    if log_level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError(f"--log-level: {raw['--log-level']!r} is not one of DEBUG, INFO, WARNING, ERROR")
    return Config(
        broker=broker,
        url=url,
        api_key=api_key,
        connection_id=raw["--connection-id"] or None,
        result_backend=raw["--result-backend"] or None,
        batch_size=int(_number(raw, "--batch-size", 1, INGEST_EVENTS_MAX, integer=True)),
        flush_interval_s=_number(raw, "--flush-interval", 0.01, 0.25),
        spool_dir=raw["--spool-dir"],
        spool_max_bytes=int(_number(raw, "--spool-max-mb", 1, 1_000_000, integer=True)) * 1024 * 1024,
        queue_interval_s=_number(raw, "--queue-interval", 0.5, 3600),
        queues=_queue_names(raw["--queues"]),
        command_interval_s=_number(raw, "--command-interval", 0.2, 3600),
        revoke_signal=revoke_signal,
        redact_keys=_key_patterns(raw["--redact-keys"]),
        omit_args=_task_names(raw["--omit-args"]),
        log_level=log_level,
    )


def _number(raw: dict, flag: str, low: float, high: float, integer: bool = False) -> float:
    text = raw[flag]
    try:
        value = int(text) if integer else float(text)
    except (TypeError, ValueError):
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{flag}: {text!r} is not {kind}") from None
    if not low <= value <= high:
        raise ConfigError(f"{flag}: {text} is outside {low:g}..{high:g}")
    return value


def _key_patterns(text: Optional[str]) -> tuple:
    """Key patterns as jobwatch's REDACT_KEYS takes them: letters, digits, _ and -, or `none`."""
    if (text or "").strip().lower() == "none":
        return ()
    patterns = tuple(pattern.strip() for pattern in (text or "").split(",") if pattern.strip())
    for pattern in patterns:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", pattern):
            raise ConfigError(f"--redact-keys: {pattern!r} is not a key pattern (letters, digits, _ and -, at most 64), or none")
    if not 1 <= len(patterns) <= 100:
        raise ConfigError(f"--redact-keys: name 1 to 100 key patterns, or none (got {len(patterns)})")
    return patterns


def _task_names(text: Optional[str]) -> tuple:
    names = tuple(name.strip() for name in (text or "").split(",") if name.strip())
    if len(names) > 1000:
        raise ConfigError(f"--omit-args: at most 1000 task names (got {len(names)})")
    for name in names:
        if len(name) > 1024:
            raise ConfigError(f"--omit-args: {name[:40]!r}... is longer than jobwatch's 1024-character task names")
    return names


def _queue_names(text: Optional[str]) -> tuple:
    names = tuple(name.strip() for name in (text or "").split(",") if name.strip())
    for name in names:
        if len(name) > 255:
            raise ConfigError(f"--queues: {name[:40]!r}... is longer than jobwatch's 255-character queue names")
    return names
