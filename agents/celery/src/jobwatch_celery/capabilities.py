"""What this agent can do in Celery, for every command type jobwatch knows, and why not.

The same table answers a command the agent cannot carry out (`unsupported` with the
reason) and the report jobwatch's dashboard reads to show such a control disabled with
that reason (`PUT /api/agent/capabilities`, sent at start and after each outage).
"""
from __future__ import annotations

import logging
from typing import Dict, Optional

from . import __version__
from .http_client import Client, NetworkError

log = logging.getLogger("jobwatch_celery.capabilities")

PROMOTE_REASON = ("Celery keeps a task with an ETA or countdown in the memory of the worker that took it, "
                  "waiting for its time: Celery has no way to run it now")
RETRY_NOW_REASON = ("a Celery task waiting to retry is an ETA task in the memory of the worker that took it: "
                    "Celery has no way to run it now (it runs at its retry time; delete revokes it)")
KILL_REASON = ("Celery has no dead set to move a task to: a task waiting to retry lives in a worker's memory "
               "until its retry time (delete revokes it)")
CLEAN_FINISHED_REASON = ("Celery keeps no finished tasks in the broker: their results live in the result backend, "
                         "which expires them itself (result_expires); only waiting tasks can be purged")
RETRY_FAILED_REASON = ("Celery keeps no list of a queue's failed tasks to retry at once: "
                       "jobwatch sends one retry per failed task of the queue")
# shown on the dashboard beside the disabled control: in a user's words, not command names
CONCURRENCY_REASON = ("Celery has no concurrency limit per queue: set a rate limit on its tasks, "
                      "or change its workers' pool size, instead")

# command type -> None when the agent carries it out, else why Celery cannot
CONTROLS: Dict[str, Optional[str]] = {
    "revoke": None,
    "retry": None,  # from failed or cancelled; from retrying: RETRY_NOW_REASON
    "promote": PROMOTE_REASON,
    "delete": None,
    "kill": KILL_REASON,
    "queue.pause": None,
    "queue.resume": None,
    "queue.clean": None,  # waiting tasks; finished ones: CLEAN_FINISHED_REASON
    "queue.retry_failed": RETRY_FAILED_REASON,
    "queue.concurrency": CONCURRENCY_REASON,
    "task.rate_limit": None,
    "worker.quiet": None,
    "worker.stop": None,
    "worker.pool": None,
}


def unknown_type_reason(kind: object) -> str:
    return f"this agent version does not know {str(kind)[:64]!r}"


def capabilities_body() -> dict:
    controls = {kind: ({"supported": True} if reason is None else {"supported": False, "reason": reason}) for kind, reason in CONTROLS.items()}
    return {"framework": "celery", "agentVersion": __version__, "controls": controls}


class CapabilityReport:
    """Sends the capabilities once jobwatch answers, and again after each outage."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.due = True

    def outage_over(self) -> None:
        self.due = True

    def send_if_due(self) -> None:
        if not self.due:
            return
        try:
            response = self.client.put("/api/agent/capabilities", capabilities_body())
        except NetworkError as error:
            log.warning("capabilities: jobwatch unreachable (%s); sending them again at the next poll", error)
            return
        if 200 <= response.status < 300:
            log.info("capabilities reported: %d controls, %d of them unsupported in Celery",
                     len(CONTROLS), sum(reason is not None for reason in CONTROLS.values()))
            self.due = False
        elif response.status in (404, 405):
            # A jobwatch from before controls: its dashboard offers revoke and retry only.
            log.warning("capabilities: this jobwatch does not take them (%d); its dashboard will not know what Celery supports", response.status)
            self.due = False
        elif response.status == 429 or response.status >= 500:
            log.warning("capabilities: jobwatch answered %d %s; sending them again at the next poll", response.status, response.error_text())
        else:
            log.error("capabilities refused: %d %s", response.status, response.error_text())
            self.due = False
