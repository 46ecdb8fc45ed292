/**
 * An accepted event as it is logged and replayed: times as epoch milliseconds, nulls
 * dropped, and every server-made value (ids of records it creates) decided up front so
 * that `evolve` is deterministic on replay.
 */
import type { Framework, JobState, WorkerEventState } from './states.ts';

export interface JobEvent {
  kind: 'job';
  atMs: number;
  framework: Framework;
  /** id for the job if this event creates it */
  newJobId?: string;
  /** id for the queue if this event names a queue the connection has not seen */
  newQueueId?: string;
  externalId: string;
  name: string;
  state: JobState;
  queue?: string;
  workerId?: string;
  attempt?: number;
  maxRetries?: number;
  progress?: number;
  error?: string;
  stacktrace?: string;
  createdAtMs?: number;
  startedAtMs?: number;
  completedAtMs?: number;
  extensions?: Record<string, unknown>;
  /** the job system's id of the parent job, in the same connection (never the job's own) */
  parentExternalId?: string;
  /** the job system's id of the workflow's first job (never the job's own) */
  rootExternalId?: string;
  /** the arguments as kept: JSON text, masked and cut on ingest (job-payload.ts) */
  args?: string;
  /** the run's result as kept: JSON text, masked and cut on ingest */
  result?: string;
  /** progress reported as an object: its JSON text, masked and cut; `progress` is then what it says as a fraction, if it does */
  progressData?: string;
  /** lines to append to the job's log, as a JSON array of strings, and how many */
  logs?: string;
  logLineCount?: number;
}

export interface WorkerEvent {
  kind: 'worker';
  atMs: number;
  framework: Framework;
  newWorkerId?: string;
  externalId: string;
  hostname: string;
  state: WorkerEventState;
  pid?: number;
  concurrency?: number;
  activeJobs?: number;
  queues?: string[];
  metadata?: Record<string, unknown>;
}

export interface QueueEvent {
  kind: 'queue';
  atMs: number;
  framework: Framework;
  newQueueId?: string;
  name: string;
  depth: number;
  consumers?: number;
  extensions?: Record<string, unknown>;
}

export type NormalizedEvent = JobEvent | WorkerEvent | QueueEvent;
