/** Realistic Celery-like jobs for the dashboard tests and the README screenshot. */
import { jobEvent, workerEvent } from '../support/events.ts';

const TASKS = ['emails.send_welcome', 'billing.charge_invoice', 'images.resize', 'reports.build_daily', 'search.reindex_document'];
const QUEUES = ['default', 'emails', 'billing', 'media'];
const WORKERS = ['celery@web-1', 'celery@web-2', 'celery@batch-1'];
const ERRORS = ['ConnectionError: SMTP server smtp.internal:25 refused the connection', 'CardDeclined: card ending 4242 was declined', 'TimeoutError: resize took longer than 30 s'];

export function stackTraceOf(error: string): string {
  return [
    'Traceback (most recent call last):',
    '  File "/srv/app/venv/lib/python3.11/site-packages/celery/app/trace.py", line 477, in trace_task',
    '    R = retval = fun(*args, **kwargs)',
    '  File "/srv/app/tasks/jobs.py", line 42, in run',
    '    result = client.call(payload)',
    error,
  ].join('\n');
}

/** `count` jobs ending `spreadMs` before `nowMs`, each a realistic run of events (queued, active, then finished or not). */
export function realisticJobEvents(connectionId: string, nowMs: number, count: number, spreadMs = 50 * 60_000): unknown[] {
  const events: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const name = TASKS[i % TASKS.length]!;
    const queue = QUEUES[(i * 7) % QUEUES.length]!;
    const workerId = WORKERS[i % WORKERS.length]!;
    const createdMs = nowMs - Math.round(((i + 1) / count) * spreadMs);
    const base = { externalId: `${(0x5f3a1c + i * 7919).toString(16)}-${i}-4c1e-9a2b-${(i * 104729).toString(16).padStart(8, '0')}`, name, queue };
    events.push(jobEvent(connectionId, createdMs, { ...base, state: 'queued' }));
    const outcome = i % 11 === 3 ? 'failed' : i % 9 === 5 ? 'queued' : i % 13 === 7 ? 'active' : 'completed';
    if (outcome === 'queued') continue;
    const startedMs = createdMs + 40 + (i % 5) * 120;
    events.push(jobEvent(connectionId, startedMs, { ...base, state: 'active', workerId, startedAt: new Date(startedMs).toISOString() }));
    if (outcome === 'active') continue;
    const completedMs = startedMs + 150 + ((i * 37) % 40) * 90;
    const error = ERRORS[i % ERRORS.length]!;
    events.push(
      jobEvent(connectionId, completedMs, {
        ...base,
        state: outcome,
        workerId,
        startedAt: new Date(startedMs).toISOString(),
        completedAt: new Date(completedMs).toISOString(),
        ...(outcome === 'failed' ? { error, stacktrace: stackTraceOf(error) } : {}),
      }),
    );
  }
  return events;
}

export function workerEvents(connectionId: string, nowMs: number): unknown[] {
  return WORKERS.map((externalId, i) =>
    workerEvent(connectionId, nowMs, {
      externalId,
      hostname: externalId.replace('celery@', ''),
      pid: 4100 + i,
      state: 'online',
      concurrency: 8,
      queues: QUEUES.slice(0, 2 + i),
      metadata: { sw_ver: '5.3.6', pool: 'prefork' },
    }),
  );
}
