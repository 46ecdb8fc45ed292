"""Real processes for the end-to-end test: redis-server, jobwatch, a Celery worker and the agent.

Each is started on a free loopback port with a temporary directory and stopped after.
A missing program fails the test with what to install: a skipped end-to-end test would
look green while proving nothing.
"""
from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Callable, Dict, List, Optional, TypeVar

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_SRC = os.path.join(HERE, "..", "src")
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
# Debian's Python: the one python3-celery/python3-redis are installed into.
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
ADMIN = {"email": "e2e@example.com", "password": "an end-to-end password"}
T = TypeVar("T")


def require(program: str, install_hint: str) -> str:
    path = shutil.which(program) or (program if os.path.exists(program) else None)
    if path is None:
        pytest.fail(f"{program} not found: {install_hint}", pytrace=False)
    return path


def require_celery() -> None:
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import celery, redis, kombu"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.fail(f"{SYSTEM_PYTHON} cannot import celery/redis/kombu: install Debian's python3-celery python3-redis python3-kombu ({probe.stderr.strip()[-200:]})", pytrace=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check: Callable[[], Optional[T]], timeout_s: float, what: str, interval_s: float = 0.1) -> T:
    """Polls `check` until it returns something truthy; fails naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (AssertionError, KeyError, IndexError, urllib.error.URLError, ConnectionError) as error:
            last = error
        else:
            if last:
                return last  # type: ignore[return-value]
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}; last: {str(last)[:2000]}")


class Process:
    """A child process whose output goes to a file the test can read (and prints on failure)."""

    def __init__(self, name: str, argv: List[str], env: Dict[str, str], log_dir: str, cwd: Optional[str] = None) -> None:
        self.name = name
        self.log_path = os.path.join(log_dir, f"{name}.log")
        self._log = open(self.log_path, "ab")
        self.popen = subprocess.Popen(argv, env=env, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        with open(self.log_path, "rb") as file:
            return file.read().decode("utf-8", "replace")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 10.0) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)  # its own session: the process and its pool children
                self.popen.wait(5)
        self._log.close()


class Jobwatch:
    """The real service (`bun src/main.ts`) plus a logged-in HTTP client."""

    def __init__(self, data_dir: str, log_dir: str) -> None:
        self.bun = require(os.path.join(REPO, "node_modules", ".bin", "bun"), "run `npm install` in the repository first")
        self.data_dir = data_dir
        self.log_dir = log_dir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: Optional[Process] = None
        self.starts = 0
        self.cookies = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def start(self) -> None:
        self.starts += 1
        # REDACT_KEYS=none: jobwatch masks nothing itself, so what a test finds masked the agent masked
        env = {**os.environ, "PORT": str(self.port), "HOST": "127.0.0.1", "DATA_DIR": self.data_dir, "DAILY_EVENT_LIMIT": "0",
               "ADMIN_EMAIL": ADMIN["email"], "ADMIN_PASSWORD": ADMIN["password"], "REDACT_KEYS": "none"}
        self.process = Process(f"jobwatch-{self.starts}", [self.bun, "src/main.ts"], env, self.log_dir, cwd=REPO)
        wait_for(lambda: self._healthy(), 30, "jobwatch to answer /api/health")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def _healthy(self) -> bool:
        if self.process is not None and self.process.popen.poll() is not None:
            raise RuntimeError(f"jobwatch exited: {self.process.output()[-2000:]}")
        try:
            with urllib.request.urlopen(self.base + "/api/health", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, ConnectionError):
            return False

    def call(self, method: str, path: str, body: object = None, expect: int = 200) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={"content-type": "application/json"} if data else {})
        try:
            with self.cookies.open(request, timeout=10) as reply:
                status, raw = reply.status, reply.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        parsed = json.loads(raw) if raw else None
        assert status == expect, f"{method} {path}: {status} {parsed}"
        return parsed

    def ingest(self, api_key: str, events: List[dict]) -> dict:
        """Sends events as any holder of the connection's API key can."""
        request = urllib.request.Request(self.base + "/api/ingest", data=json.dumps({"events": events}).encode(), method="POST",
                                         headers={"content-type": "application/json", "authorization": f"Bearer {api_key}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.loads(reply.read())

    def login_and_connect(self) -> dict:
        self.call("POST", "/api/auth/login", ADMIN)
        return self.call("POST", "/api/connections", {"name": "celery-e2e"}, expect=201)

    def jobs(self, **filters: str) -> List[dict]:
        query = "&".join(f"{k}={v}" for k, v in {"limit": "100", **filters}.items())
        return self.call("GET", f"/api/jobs?{query}")["data"]

    def job_by_external_id(self, external_id: str) -> Optional[dict]:
        for job in self.jobs():
            if job["externalId"] == external_id:
                return self.call("GET", f"/api/jobs/{job['id']}")
        return None


class RedisServer:
    """A redis-server of the test's own, without persistence, that can be restarted."""

    def __init__(self, tmp: str) -> None:
        redis_server = require("redis-server", "install Debian's redis-server (apt-get install redis-server)")
        self.tmp = tmp
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.argv = [redis_server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp]
        self.runs = [Process("redis", self.argv, dict(os.environ), tmp)]
        wait_for(self.ready, 10, "redis-server to answer PING")

    @property
    def process(self) -> Process:
        return self.runs[-1]

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1)

    def ready(self) -> bool:
        import redis

        try:
            return bool(self.client().ping())
        except redis.exceptions.ConnectionError:
            return False

    def restart(self, down_s: float) -> None:
        """The broker goes away (its data with it, as a restart without persistence does) and comes back."""
        self.process.stop()
        time.sleep(down_s)
        self.runs.append(Process(f"redis-{len(self.runs) + 1}", self.argv, dict(os.environ), self.tmp))
        wait_for(self.ready, 10, "redis-server to answer PING again")

    def stop(self) -> None:
        self.process.stop()


def celery_env(broker: str) -> Dict[str, str]:
    """The environment a worker of the test app and the agent run in (from the checkout, not installed)."""
    require_celery()
    return {**os.environ, "E2E_BROKER": broker, "PYTHONPATH": os.pathsep.join([HERE, AGENT_SRC])}


def start_worker(env: Dict[str, str], log_dir: str, name: str, queues: str = "celery", concurrency: int = 2) -> Process:
    """A real Celery worker of the test app (`e2e_app`), sending events, without mingle and gossip."""
    return Process(f"worker-{name.split('@')[0]}", [SYSTEM_PYTHON, "-m", "celery", "-A", "e2e_app", "worker", "-E", "-c", str(concurrency), "-n", name,
                                                   "-Q", queues, "-O", "fair", "--without-mingle", "--without-gossip", "--loglevel", "INFO"], env, log_dir, cwd=HERE)


def producer_app(broker: str):
    """The test app in this process (the producer side), on `broker` (made anew for each test module's broker)."""
    import importlib

    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    os.environ["E2E_BROKER"] = broker
    import e2e_app  # noqa: E402

    return e2e_app if e2e_app.app.conf.broker_url == broker else importlib.reload(e2e_app)


def close_results(app) -> None:
    """This process's results unsubscribe from Redis when collected at exit; without a
    subscription left they do not try to reach the stopped redis-server."""
    consumer = getattr(app.backend, "result_consumer", None)
    if consumer is not None and getattr(consumer, "_pubsub", None) is not None:
        consumer._pubsub.close()
        consumer._pubsub = None


class Cluster:
    """redis-server, one Celery worker and the agent, around a Jobwatch."""

    def __init__(self, tmp: str) -> None:
        require("redis-server", "install Debian's redis-server (apt-get install redis-server)")
        require_celery()
        self.tmp = tmp
        self.redis_server = RedisServer(tmp)
        self.redis_port = self.redis_server.port
        self.broker = self.redis_server.url
        self.jobwatch = Jobwatch(os.path.join(tmp, "jobwatch-data"), tmp)
        self.jobwatch.start()
        created = self.jobwatch.login_and_connect()
        self.connection_id = created["connection"]["id"]
        self.api_key = created["apiKey"]
        self.env = celery_env(self.broker)
        self.worker_name = f"e2e-{os.getpid()}@{socket.gethostname()}"
        self.worker = start_worker(self.env, tmp, self.worker_name)
        self.agents_started = 0
        self.agent = self.start_agent()
        self.app = producer_app(self.broker)

    def start_agent(self) -> Process:
        """The agent as a user runs it; every start shares the spool directory."""
        self.agents_started += 1
        self.agent_runs: List[Process] = getattr(self, "agent_runs", [])
        argv = [SYSTEM_PYTHON, "-m", "jobwatch_celery", "--broker", self.broker, "--url", self.jobwatch.base, "--api-key", self.api_key,
                "--result-backend", self.broker, "--spool-dir", os.path.join(self.tmp, "spool"), "--queue-interval", "0.5", "--command-interval", "0.2",
                "--omit-args", "e2e_app.sign_in"]
        process = Process(f"agent-{self.agents_started}", argv, self.env, self.tmp, cwd=self.tmp)
        self.agent_runs.append(process)
        return process

    def spooled_events(self) -> int:
        from jobwatch_celery.spool import BATCH_FILE

        spool = os.path.join(self.tmp, "spool")
        names = os.listdir(spool) if os.path.isdir(spool) else []
        return sum(int(match.group(2)) for match in map(BATCH_FILE.match, names) if match)

    @property
    def redis(self) -> Process:
        return self.redis_server.process

    def restart_redis(self, down_s: float) -> None:
        self.redis_server.restart(down_s)

    def stop(self) -> None:
        for process in (self.agent, self.worker):
            process.stop()
        self.jobwatch.stop()
        close_results(self.app.app)
        self.redis_server.stop()

    def logs(self) -> str:
        parts = []
        for process in (*self.agent_runs, self.worker, self.jobwatch.process, *self.redis_server.runs):
            if process is not None:
                parts.append(f"----- {process.name} -----\n{process.output()[-6000:]}")
        return "\n".join(parts)


def started_cluster(tmp_path_factory, name):
    """A test module's cluster (as a generator fixture's body): yielded once jobwatch shows
    the worker, stopped after the module whatever happened."""
    cluster = Cluster(str(tmp_path_factory.mktemp(name)))
    try:
        wait_for(lambda: cluster.jobwatch.call("GET", "/api/workers")["data"], 30, "the worker to appear in jobwatch")
        yield cluster
    finally:
        cluster.stop()


def logs_on_failure(request, cluster):
    """The cluster's logs printed after a test that failed (as a generator fixture's body)."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(cluster.logs())
