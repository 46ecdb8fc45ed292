"""Task commands: a task type's rate limit, set on every worker that has the task registered.

Celery's `rate_limit` control changes the limit in the workers' memory: it lasts until a
worker restarts (the task's own `rate_limit` option is the lasting one). Only workers that
registered the task are asked, and each confirms; a task no worker registered is not found.
"""
from __future__ import annotations

from typing import List

from .command_inputs import params_of, rate_problem
from .outcome import Outcome, done, failed, not_found
from .remote_control import RemoteControl


def registered_by(registered: dict, name: str) -> List[str]:
    """The workers whose `registered` answer lists the task (with or without its `[rate_limit=...]`)."""
    hosts = []
    for host, tasks in registered.items():
        for entry in tasks if isinstance(tasks, list) else ():
            if isinstance(entry, str) and entry.split(" [", 1)[0] == name:
                hosts.append(host)
                break
    return hosts


class TaskControls:
    def __init__(self, remote: RemoteControl) -> None:
        self.remote = remote

    def rate_limit(self, command_id: str, command: dict) -> Outcome:
        name = command["name"]
        params = params_of(command)
        if params is None or "rate" not in params:
            return failed(command_id, "not a rate limit: params.rate is required (a rate such as '10/m', or null to clear it)")
        rate = params["rate"]
        problem = rate_problem(rate)
        if problem is not None:
            return failed(command_id, problem)
        hosts = registered_by(self.remote.ask("registered"), name)
        if not hosts:
            return not_found(command_id, f"no worker answering on this broker has task {name!r} registered")
        replies = self.remote.command("rate_limit", {"task_name": name, "rate_limit": rate}, hosts)
        if not replies.all_ok:
            return failed(command_id, f"rate limit not confirmed: {replies.problem(self.remote.reply_timeout_s)}", workers=len(replies.ok))
        what = f"rate limit {rate}" if rate is not None else "rate limit cleared"
        return done(command_id, f"{what} on {len(hosts)} worker(s) (until a worker restarts: the task's rate_limit option is the lasting one)",
                    workers=len(hosts))
