"""`jobwatch-celery`: wires capture, normalization, delivery, queue depth and commands."""
from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from typing import Callable, List, Optional, Set

from celery import Celery

from . import log_lines
from .backend_values import BackendValues
from .backoff import Backoff
from .capture import Capture, enable_events
from .commands import CommandRunner
from .config import Config, ConfigError, load_config
from .deliver import Deliverer
from .http_client import Client, NetworkError
from .normalize import Normalizer
from .paused_queues import PausedQueues
from .private_files import makedirs_private, tighten_private_tree
from .queue_depth import QueueMonitor
from .spool import Spool
from .task_names import lookup_names
from .task_values import TaskValues
from .workers_seen import WorkersSeen

log = logging.getLogger("jobwatch_celery")
ENABLE_EVENTS_INTERVAL_S = 5.0
WORKER_REFRESH_INTERVAL_S = 10.0
STATS_INTERVAL_S = 60.0
SHUTDOWN_FLUSH_S = 5.0


def main(argv: Optional[List[str]] = None) -> int:
    try:
        config = load_config(argv)
    except ConfigError as error:
        print(f"jobwatch-celery: {error}", file=sys.stderr)
        return 2
    log_lines.configure(config.log_level)
    logging.getLogger("kombu.mixins").setLevel(logging.WARNING)  # its "Connected to" repeats the agent's own line
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    client = Client(config.url, config.api_key)
    try:
        connection_id = config.connection_id or discover_connection(client, stopping)
    except ConfigError as error:
        print(f"jobwatch-celery: {error}", file=sys.stderr)
        return 2
    if connection_id is None:
        return 0
    try:
        agent = Agent(config, client, connection_id)
    except ConfigError as error:
        print(f"jobwatch-celery: {error}", file=sys.stderr)
        return 2
    agent.run(stopping)
    return 0


def discover_connection(client: Client, stopping: threading.Event) -> Optional[str]:
    """Asks jobwatch which connection the key belongs to; waits while jobwatch is unreachable."""
    backoff = Backoff(base_s=1.0, cap_s=30.0)
    while not stopping.is_set():
        try:
            response = client.get("/api/agent/connection")
        except NetworkError as error:
            delay = backoff.next_delay()
            log.warning("jobwatch unreachable (%s); asking for the connection again in %.1fs", error, delay)
            stopping.wait(delay)
            continue
        if response.status == 200 and isinstance(response.body, dict) and response.body.get("connectionId"):
            return str(response.body["connectionId"])
        if response.status == 401:
            raise ConfigError(f"--api-key: jobwatch refused the key ({response.error_text()})")
        if response.status == 404:
            raise ConfigError("--connection-id is required: this jobwatch cannot tell the connection from the key")
        delay = backoff.next_delay(response.retry_after_s)
        log.warning("jobwatch answered %d %s; asking again in %.1fs", response.status, response.error_text(), delay)
        stopping.wait(delay)
    return None


class Agent:
    def __init__(self, config: Config, client: Client, connection_id: str) -> None:
        self.config = config
        self.app = Celery("jobwatch-celery", broker=config.broker, backend=config.result_backend, set_as_current=False)
        values = TaskValues(config.redact_keys, config.omit_args)
        self.normalizer = Normalizer(connection_id, values=values)
        self.lock = threading.Lock()  # the normalizer's state is shared by capture and housekeeping
        try:
            makedirs_private(config.spool_dir)
            for line in tighten_private_tree(config.spool_dir):
                log.warning("%s", line)
            spool = Spool(config.spool_dir, config.spool_max_bytes)
        except OSError as error:
            raise ConfigError(f"--spool-dir: cannot use {config.spool_dir!r} ({error.strerror or error})") from error
        self.deliverer = Deliverer(client, spool, config.batch_size, config.flush_interval_s)
        # a finished task's event waits for its whole result and arguments from the result backend
        self.backend_values = BackendValues(self.app, values, self.deliverer.submit)
        self.capture = Capture(self.app, self.on_event)
        self.paused = PausedQueues(config.spool_dir)
        self.queues = QueueMonitor(self.app, self.normalizer.worker_info, self.queues_from_events, connection_id, config.queues, paused=self.paused.names)
        self.workers_seen = WorkersSeen()
        self.new_worker = threading.Event()
        self.commands = CommandRunner(
            self.app, client, config.revoke_signal, reported=self.reported, watched_queues=self.watched_queues, paused=self.paused,
            known_workers=self.known_workers, offline_since=self.workers_seen.offline_since, workers_changed=self.new_worker.set,
        )

    def on_event(self, event: dict) -> None:
        with self.lock:
            events = self.normalizer.normalize(event)
        self.backend_values.send(events)
        self.workers_seen.saw(event)
        if event.get("type", "").startswith("worker-") and event.get("hostname") not in self.normalizer.worker_info.queues:
            self.new_worker.set()  # learn its queues and pool size now, not at the next refresh

    def reported(self, task_id: str) -> Optional[dict]:
        """What the agent knows of a task it reported (its queue among it), None for one it never saw."""
        with self.lock:
            facts = self.normalizer.facts.get(task_id)
            return dict(facts) if facts else None

    def watched_queues(self) -> Set[str]:
        """The queues the agent knows: named by events, consumed by workers, or given with --queues."""
        with self.lock:
            names = set(self.normalizer.queues_seen)
        names.update(self.config.queues)
        names.update(self.paused.names())
        for queues in list(self.normalizer.worker_info.queues.values()):
            names.update(queues)
        return names

    def known_workers(self) -> Set[str]:
        """The workers the agent saw: in their events or in the last inspect."""
        return self.workers_seen.hostnames() | set(self.normalizer.worker_info.queues)

    def queues_from_events(self) -> List[str]:
        with self.lock:
            return list(self.normalizer.queues_seen)

    def run(self, stopping: threading.Event) -> None:
        log.info("jobwatch-celery starting: broker %s, jobwatch %s, connection %s", self.app.connection_for_read().as_uri(), self.config.url, self.normalizer.connection_id)
        masked = f"the values of keys matching {', '.join(self.config.redact_keys)} masked" if self.config.redact_keys else "nothing masked (--redact-keys none)"
        omitted = f"; the arguments of {', '.join(self.config.omit_args)} are never sent" if self.config.omit_args else ""
        whole = "whole from the result backend once a task finishes" if self.backend_values.enabled else "as the events carry them (no --result-backend)"
        log.info("task arguments and results are sent %s, with %s%s", whole, masked, omitted)
        threads = [
            threading.Thread(target=self.capture.run, args=(stopping,), name="capture", daemon=True),
            threading.Thread(target=self.deliverer.run, args=(stopping,), name="deliver", daemon=True),
            threading.Thread(target=self.backend_values.run, args=(stopping,), name="backend-values", daemon=True),
            threading.Thread(target=self._every, args=(stopping, 0.25, self._release_held), name="held", daemon=True),
            threading.Thread(target=self._every, args=(stopping, ENABLE_EVENTS_INTERVAL_S, lambda: enable_events(self.app)), name="enable-events", daemon=True),
            threading.Thread(target=self._every, args=(stopping, WORKER_REFRESH_INTERVAL_S, self._refresh_workers, True, self.new_worker), name="inspect", daemon=True),
            threading.Thread(target=self._every, args=(stopping, self.config.queue_interval_s, self._snapshot_queues), name="queues", daemon=True),
            threading.Thread(target=self._every, args=(stopping, self.config.command_interval_s, self.commands.poll), name="commands", daemon=True),
            threading.Thread(target=self._every, args=(stopping, STATS_INTERVAL_S, self._log_stats, False), name="stats", daemon=True),
        ]
        for thread in threads:
            thread.start()
        while not stopping.is_set():
            stopping.wait(1.0)
        log.info("stopping: flushing events")
        self.capture.stop()
        threads[0].join(timeout=3.0)
        threads[1].join(timeout=SHUTDOWN_FLUSH_S)
        with self.lock:
            self.normalizer.name_wait_s = 0.0
            released = self.normalizer.release_overdue()
        self.backend_values.send(released)
        self.backend_values.close()
        self.deliverer.close(SHUTDOWN_FLUSH_S)
        self.queues.close()
        self._log_stats()

    def _release_held(self) -> None:
        with self.lock:
            overdue = self.normalizer.overdue()
        if not overdue:
            return
        names = lookup_names(self.app, overdue)  # outside the lock: capture goes on meanwhile
        with self.lock:
            events = self.normalizer.release_overdue(names)
        self.backend_values.send(events)

    def _refresh_workers(self) -> None:
        self.new_worker.clear()
        asked_at = time.time()
        active = self.queues.refresh_workers()
        self.commands.queues.keep_paused(active, asked_at)

    def _snapshot_queues(self) -> None:
        self.deliverer.submit(self.queues.snapshots())

    def _log_stats(self) -> None:
        d = self.deliverer
        log.info(
            "stats: %d native events captured, %d sent (%d without a task name), %d rejected, %d waiting (spool %d), "
            "dropped: %d spool-full, %d spool-unwritable, %d memory-full, %d refused, %d over daily limit",
            self.capture.events_seen, d.sent, self.normalizer.sent_unnamed, d.rejected, d.pending, d.spool.events,
            d.spool.dropped_events, d.dropped_unwritable, d.dropped_memory, d.dropped_refused, d.truncated,
        )

    @staticmethod
    def _every(
        stopping: threading.Event, interval_s: float, work: Callable[[], object], first_now: bool = True, sooner: Optional[threading.Event] = None
    ) -> None:
        """Runs `work` every interval (or when `sooner` is set) until stopping; a failure is logged once per streak, never fatal."""
        failing = False
        if not first_now:
            stopping.wait(interval_s)
        while not stopping.is_set():
            try:
                work()
                failing = False
            except Exception as error:
                if not failing:
                    log.warning("%s failed (%s: %s); trying again every %.1fs", threading.current_thread().name, type(error).__name__, error, interval_s)
                failing = True
            if sooner is None:
                stopping.wait(interval_s)
            else:
                sooner.wait(interval_s)
