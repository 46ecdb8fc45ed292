"""The Celery app the end-to-end test runs in a real worker (broker and backend from E2E_BROKER)."""
import os
import time

from celery import Celery

app = Celery("e2e_app", broker=os.environ["E2E_BROKER"], backend=os.environ["E2E_BROKER"])
app.conf.update(
    result_extended=True,  # the result backend keeps name, args, kwargs and queue: retry can re-send
    task_send_sent_event=True,  # task-sent events name the queue and the dispatch time
    worker_send_task_events=True,
    task_track_started=True,  # the test can see in the backend that a task runs (inspect replies are slow under load)
)


@app.task
def add(x, y):
    return x + y


@app.task
def sleepy(seconds):
    time.sleep(seconds)
    return seconds


@app.task
def boom(message):
    raise ValueError(message)


@app.task(bind=True, max_retries=1)
def flaky(self):
    if self.request.retries == 0:
        raise self.retry(countdown=0.2, exc=RuntimeError("first attempt fails"))
    return "second attempt"


@app.task
def needs_flag(path):
    if not os.path.exists(path):
        raise RuntimeError(f"flag {path} missing")
    return "flag found"


@app.task
def charge(account, amount, invoice_id=None, card=None):
    return {"charged": amount, "invoice_id": invoice_id, "receipt": {"token": "rcpt-tok"}}


@app.task
def bulk(items):
    return len(items)


@app.task
def sign_in(user, password):
    return f"{user} signed in"


@app.task
def big_report(chars):
    return "x" * chars


@app.task(ignore_result=True)
def forgetful():
    raise RuntimeError("fails and keeps no result")


@app.task(bind=True, max_retries=1)
def retries_later(self):
    # waits a minute for its retry: in the worker's timer, where Celery cannot run it sooner
    raise self.retry(countdown=60, exc=RuntimeError("retry in a minute"))


@app.task
def total(values):
    return sum(values)
