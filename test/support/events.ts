/** Builders of valid ingest events; tests override only what they are about. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function jobEvent(connectionId: string, atMs: number, job: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    type: 'job_state_change',
    timestamp: iso(atMs),
    framework: 'celery',
    connectionId,
    job: { externalId: 'task-1', name: 'tasks.add', queue: 'default', state: 'queued', ...job },
    ...extra,
  };
}

export function workerEvent(connectionId: string, atMs: number, worker: Record<string, unknown> = {}) {
  return {
    type: 'worker_state_change',
    timestamp: iso(atMs),
    framework: 'celery',
    connectionId,
    worker: { externalId: 'worker-1', hostname: 'host-a', state: 'online', ...worker },
  };
}

export function queueEvent(connectionId: string, atMs: number, queue: Record<string, unknown> = {}) {
  return {
    type: 'queue_snapshot',
    timestamp: iso(atMs),
    framework: 'celery',
    connectionId,
    queue: { name: 'default', depth: 3, ...queue },
  };
}
