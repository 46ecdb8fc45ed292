"""The few HTTP calls the agent makes, over the standard library."""
from __future__ import annotations

import email.utils
import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Optional

from . import __version__

USER_AGENT = f"jobwatch-celery/{__version__}"


class NetworkError(Exception):
    """The service could not be reached or the connection broke (worth retrying)."""


@dataclass
class Response:
    status: int
    body: Any
    retry_after_s: Optional[float]

    def error_text(self) -> str:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        if isinstance(error, dict):
            return f"{error.get('code')}: {error.get('message')}"
        return str(self.body)[:300]


class Client:
    def __init__(self, base_url: str, api_key: str, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> Response:
        return self.request("POST", path, json.dumps(body, separators=(",", ":")).encode())

    def put(self, path: str, body: Any) -> Response:
        return self.request("PUT", path, json.dumps(body, separators=(",", ":")).encode())

    def request(self, method: str, path: str, data: Optional[bytes] = None) -> Response:
        headers = {"Authorization": f"Bearer {self.api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as reply:
                return _response(reply.status, reply.read(), reply.headers.get("Retry-After"))
        except urllib.error.HTTPError as error:
            with error:
                return _response(error.code, error.read(), error.headers.get("Retry-After"))
        except (urllib.error.URLError, http.client.HTTPException, socket.timeout, ConnectionError, OSError) as error:
            raise NetworkError(str(getattr(error, "reason", error))) from error


def _response(status: int, raw: bytes, retry_after: Optional[str]) -> Response:
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = raw[:300].decode("utf-8", "replace")
    return Response(status, body, parse_retry_after(retry_after))


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """`Retry-After` as seconds or as an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())
