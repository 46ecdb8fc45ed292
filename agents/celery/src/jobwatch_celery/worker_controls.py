"""Worker commands: quiet (stop taking tasks), stop (warm shutdown) and pool size, by Celery's remote control.

A worker is named by its hostname (`celery@host`, jobwatch's worker externalId). It must
answer on the broker the agent watches: a worker that does not answer is not acted on, and
the outcome says whether the agent ever knew it. Every change is confirmed by the worker:
its reply, or for a shutdown (which a worker cannot answer: it stops its consumer first)
its `worker-offline` event or its silence after it was answering.
"""
from __future__ import annotations

import time
from typing import Callable, Collection, Optional

from .command_inputs import params_of, pool_delta_problem
from .outcome import Outcome, done, failed, not_found
from .remote_control import RemoteControl
from .worker_pool import pool_size

# a warm shutdown stops the worker's consumer (and its answers) at once, then waits for its running tasks
STOP_CONFIRM_S = 10.0
POOL_SIZE_MAX = 1000
PING_WAIT_S = 1.5


class WorkerControls:
    def __init__(
        self,
        remote: RemoteControl,
        known_workers: Callable[[], Collection[str]],
        offline_since: Callable[[str], Optional[float]],
        workers_changed: Callable[[], None],
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`known_workers`: the hostnames the agent saw (events, inspect); `offline_since`: when the agent
        last received the worker's `worker-offline`; `workers_changed`: asks for the workers' queues and
        pool sizes again, so jobwatch shows the change."""
        self.remote = remote
        self.known_workers = known_workers
        self.offline_since = offline_since
        self.workers_changed = workers_changed
        self.clock = clock
        self.sleep = sleep

    def _silent(self, command_id: str, host: str) -> Outcome:
        if host not in self.known_workers():
            return not_found(command_id, f"no worker named {host!r} answers on this broker, and the agent has not seen one")
        return failed(command_id, f"worker {host} did not answer within {self.remote.reply_timeout_s:g}s (offline, or too busy to answer): nothing was done")

    def quiet(self, command_id: str, command: dict) -> Outcome:
        host = command["workerId"]
        answer = self.remote.ask("active_queues", [host])
        if host not in answer:
            return self._silent(command_id, host)
        queues = [q["name"] for q in answer[host] if isinstance(q, dict) and isinstance(q.get("name"), str)] if isinstance(answer[host], list) else []
        if not queues:
            return done(command_id, "the worker consumes no queue already: it takes no new tasks", queues=0)
        refused = []
        for queue in queues:
            replies = self.remote.command("cancel_consumer", {"queue": queue}, [host])
            if not replies.all_ok:
                refused.append(f"{queue}: {replies.problem(self.remote.reply_timeout_s)}")
        self.workers_changed()
        if refused:
            return failed(command_id, f"not every consumer was cancelled ({'; '.join(refused)})", queues=len(queues) - len(refused))
        return done(command_id, f"stopped consuming {', '.join(queues)}: it finishes the tasks it holds and takes no new ones "
                    "(a restart of the worker makes it consume its queues again)", queues=len(queues))

    def stop(self, command_id: str, command: dict) -> Outcome:
        host = command["workerId"]
        if host not in self.remote.answering([host], self.remote.reply_timeout_s):
            return self._silent(command_id, host)
        sent_at = self.clock()
        self.remote.send("shutdown", [host])
        deadline = sent_at + STOP_CONFIRM_S
        silences = 0
        while self.clock() < deadline:
            offline_at = self.offline_since(host)
            if offline_at is not None and offline_at >= sent_at - 1.0:
                return done(command_id, "the worker is shutting down (worker-offline): it finishes its running tasks, then exits")
            # twice in a row: a loaded worker can miss one ping's wait
            silences = silences + 1 if host not in self.remote.answering([host], PING_WAIT_S) else 0
            if silences >= 2:
                return done(command_id, "the worker took the shutdown: it stopped answering, finishes its running tasks, then exits")
            self.sleep(0.25)
        return failed(command_id, f"the worker still answers {STOP_CONFIRM_S:g}s after the shutdown was sent: it did not take it")

    def pool(self, command_id: str, command: dict) -> Outcome:
        host = command["workerId"]
        params = params_of(command)
        delta = params.get("delta") if params is not None else None
        problem = pool_delta_problem(delta)
        if problem is not None:
            return failed(command_id, problem)
        delta = int(delta)
        stats = self.remote.ask("stats", [host])
        if host not in stats:
            return self._silent(command_id, host)
        size = pool_size(stats[host])
        if size is not None and size + delta < 1:
            return failed(command_id, f"the pool has {size} process(es): shrinking it by {-delta} would leave none (stop the worker instead)")
        if size is not None and size + delta > POOL_SIZE_MAX:
            return failed(command_id, f"the pool has {size} process(es): growing it by {delta} would pass {POOL_SIZE_MAX}")
        command_name = "pool_grow" if delta > 0 else "pool_shrink"
        replies = self.remote.command(command_name, {"n": abs(delta)}, [host])
        if not replies.all_ok:
            return failed(command_id, f"{command_name} not confirmed: {replies.problem(self.remote.reply_timeout_s)}")
        self.workers_changed()
        if size is None:
            return done(command_id, f"{command_name} by {abs(delta)}: {replies.ok[host]}")
        return done(command_id, f"pool of {size} -> {size + delta} process(es)", before=size, after=size + delta)
