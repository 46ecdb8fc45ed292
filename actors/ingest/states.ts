/** The unified vocabularies shared by ingest, storage and reads. */
export const JOB_STATES = ['unknown', 'queued', 'scheduled', 'active', 'completed', 'failed', 'retrying', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const FRAMEWORKS = ['celery', 'bullmq', 'sidekiq'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** Worker states accepted on ingest; `heartbeat` only refreshes liveness. */
export const WORKER_EVENT_STATES = ['online', 'busy', 'idle', 'offline', 'heartbeat'] as const;
export type WorkerEventState = (typeof WORKER_EVENT_STATES)[number];

export const WORKER_STATES = ['online', 'busy', 'idle', 'offline'] as const;
export type WorkerState = (typeof WORKER_STATES)[number];

export const EVENT_TYPES = ['job_state_change', 'worker_state_change', 'queue_snapshot'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const FINISHED_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed']);
