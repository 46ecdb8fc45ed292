"""Queue commands: pause and resume (a queue's consumers on its workers), and purge of its waiting tasks.

Celery has no paused queue: pausing is every worker that consumes the queue cancelling its
consumer (`cancel_consumer`), resuming is those workers consuming it again (`add_consumer`,
with the exchange and routing key they had). Tasks sent meanwhile wait in the broker. The
agent keeps the pause (`PausedQueues`) and, while a queue is paused, cancels the consumer of
any worker that starts consuming it (a worker that restarts consumes its `-Q` queues again).
Every change is confirmed by the workers' replies.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable, Collection, Dict, List, Optional, Tuple

from celery import Celery
from kombu.exceptions import OperationalError

from .capabilities import CLEAN_FINISHED_REASON
from .command_inputs import params_of
from .outcome import Outcome, done, failed, not_found, unsupported
from .paused_queues import Consumers, PausedQueues
from .remote_control import BrokerUnavailable, RemoteControl

log = logging.getLogger("jobwatch_celery.queues")

# worker hostname -> the queues it consumes, each as `active_queues` describes it
ActiveQueues = Dict[str, List[dict]]


def consumers_of(active: ActiveQueues, queue: str) -> Consumers:
    """The workers consuming `queue`, each with how it is bound (so a resume can bind it the same way)."""
    consumers: Consumers = {}
    for host, queues in active.items():
        for declared in queues if isinstance(queues, list) else ():
            if isinstance(declared, dict) and declared.get("name") == queue:
                exchange = declared.get("exchange") if isinstance(declared.get("exchange"), dict) else {}
                consumers[host] = {
                    "exchange": exchange.get("name") or None,
                    "exchange_type": exchange.get("type") or None,
                    "routing_key": declared.get("routing_key") or None,
                }
    return consumers


class QueueControls:
    def __init__(self, app: Celery, remote: RemoteControl, paused: PausedQueues, watched_queues: Callable[[], Collection[str]]) -> None:
        self.app = app
        self.remote = remote
        self.paused = paused
        self.watched_queues = watched_queues
        # a pause, a resume and the check of paused queues against what workers consume, one at a time
        self._lock = threading.Lock()

    def _unknown(self, command_id: str, queue: str) -> Optional[Outcome]:
        if queue in self.watched_queues() or self.paused.is_paused(queue):
            return None
        return not_found(command_id, f"no worker consumes queue {queue!r} and the agent knows no such queue "
                         "(none of its events, workers or --queues names it)")

    def pause(self, command_id: str, command: dict) -> Outcome:
        queue = command["queue"]
        unknown = self._unknown(command_id, queue)
        if unknown is not None:
            return unknown
        if not self.paused.room_for(queue):
            return failed(command_id, "the agent keeps at most 1000 queues paused: resume another one first")
        consumers = consumers_of(self.remote.ask("active_queues"), queue)
        with self._lock:
            self.paused.pause(queue, consumers)
            if not consumers:
                return done(command_id, "no worker consumes the queue now: it is paused for any worker that starts "
                            "consuming it (the agent cancels that consumer)", workers=0)
            replies = self.remote.command("cancel_consumer", {"queue": queue}, list(consumers))
        problem = replies.problem(self.remote.reply_timeout_s)
        if problem is not None:
            return failed(command_id, f"not confirmed by every worker consuming it ({problem}); the queue stays paused "
                          "and the agent cancels the consumer of each such worker when it answers", workers=len(replies.ok))
        return done(command_id, f"{len(replies.ok)} worker(s) stopped consuming it; its tasks wait in the broker", workers=len(replies.ok))

    def resume(self, command_id: str, command: dict) -> Outcome:
        queue = command["queue"]
        unknown = self._unknown(command_id, queue)
        if unknown is not None:
            return unknown
        with self._lock:
            entry = self.paused.resume(queue)
            if entry is None:
                return failed(command_id, "the queue is not paused (no pause of it is on record in this agent): nothing to resume")
            consumers: Consumers = entry["consumers"]
            if not consumers:
                return done(command_id, "no worker consumed the queue when it was paused: a worker started with it consumes it", workers=0)
            replies = self._add_consumers(queue, consumers)
            if not replies.ok:
                self.paused.restore(queue, entry)  # nothing resumed: it stays paused
        problem = replies.problem(self.remote.reply_timeout_s)
        if not replies.ok:
            return failed(command_id, f"no worker took the queue back ({problem}); it stays paused")
        reason = f"{len(replies.ok)} worker(s) consume it again"
        if problem is not None:
            reason += f"; {problem} (a worker started with the queue in -Q consumes it)"
        return done(command_id, reason, workers=len(replies.ok))

    def _add_consumers(self, queue: str, consumers: Consumers):
        """`add_consumer` to each worker, grouped by how it was bound; the replies merged."""
        groups: Dict[Tuple[Optional[str], Optional[str], Optional[str]], List[str]] = {}
        for host, binding in consumers.items():
            key = (binding.get("exchange"), binding.get("exchange_type"), binding.get("routing_key"))
            groups.setdefault(key, []).append(host)
        merged = None
        for (exchange, exchange_type, routing_key), hosts in groups.items():
            arguments = {"queue": queue, "exchange": exchange, "exchange_type": exchange_type or "direct", "routing_key": routing_key}
            replies = self.remote.command("add_consumer", arguments, hosts)
            if merged is None:
                merged = replies
            else:
                merged.ok.update(replies.ok)
                merged.errors.update(replies.errors)
                merged.silent.extend(replies.silent)
        return merged

    def keep_paused(self, active: ActiveQueues, asked_at: float) -> None:
        """Cancels the consumer of any worker consuming a paused queue (it restarted, or started since).

        `asked_at`: when `active` was asked for; a pause made after that is the pause's own business."""
        with self._lock:
            for queue in self.paused.names():
                paused_at = self.paused.paused_at(queue)
                if paused_at is None or paused_at > asked_at:
                    continue
                consumers = consumers_of(active, queue)
                if not consumers:
                    continue
                self.paused.pause(queue, consumers)  # they consume it again on resume
                replies = self.remote.command("cancel_consumer", {"queue": queue}, list(consumers))
                log.warning("queue %s is paused: %s consumed it again; consumer cancelled%s", queue, ", ".join(sorted(consumers)),
                            f" ({replies.problem(self.remote.reply_timeout_s)})" if not replies.all_ok else "")

    def clean(self, command_id: str, command: dict) -> Outcome:
        queue = command["queue"]
        params = params_of(command)
        mode = params.get("mode") if params is not None else None
        if mode == "finished":
            return unsupported(command_id, CLEAN_FINISHED_REASON)
        if mode != "waiting":
            return failed(command_id, f"not a clean: params.mode must be 'waiting' or 'finished', not {str(mode)[:50]!r}")
        unknown = self._unknown(command_id, queue)
        if unknown is not None:
            return unknown
        try:
            with self.app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=1)
                removed = connection.default_channel.queue_purge(queue) or 0
        except (OperationalError, OSError) as error:
            raise BrokerUnavailable(error) from error
        return done(command_id, f"purged {removed} waiting task(s); tasks a worker already took (prefetched, or "
                    "waiting for an ETA or countdown) are not in the queue and stay", removed=int(removed))
