/**
 * One job as an object: what the views, the snapshot writer and the tests read, copied out
 * of the connection's job table (job-table.ts, where jobs live as rows of columns) in one
 * synchronous step, so a reader never sees a row that was freed and reused meanwhile.
 * Also how snapshot format 1 stored jobs.
 */
import type { Framework, JobState } from '../ingest/states.ts';
import { collapseHistory, currentRunStartMs, historyFromPairs, lastHistoryState, type CompactHistory, type HistoryEntry } from './job-history.ts';

export type { HistoryEntry } from './job-history.ts';

/**
 * What few jobs have and only the detail view and the list's error column read: one value
 * for the three, null for most jobs. Replaced whole when a field changes, never mutated,
 * so a copy of a job shares it safely.
 */
export interface JobDetails {
  error: string | null;
  stacktrace: string | null;
  extensions: Record<string, unknown> | null;
}

export interface Job {
  id: string;
  connectionId: string;
  externalId: string;
  framework: Framework;
  name: string;
  queue: string | null;
  state: JobState;
  createdAtMs: number;
  /** whether createdAt came from a payload (else it is the earliest event time) */
  createdAtReported: boolean;
  startedAtMs: number | null;
  completedAtMs: number | null;
  workerId: string | null;
  /** null while error, stacktrace and extensions are all null */
  details: JobDetails | null;
  attempt: number;
  maxRetries: number | null;
  progress: number | null;
  /** every event's state and time, timestamp-ordered, packed (raw, not collapsed; see job-history.ts) */
  history: CompactHistory;
  /** timestamp of the newest event applied */
  lastEventMs: number;
  /** the job system's id of the parent job, in the same connection (relation-columns.ts) */
  parentExternalId: string | null;
  /** the job system's id of the workflow's first job, when the job system names it */
  rootExternalId: string | null;
}

/**
 * A job read back from a format 1 snapshot (its history as pairs of numbers, its details
 * as fields of their own), for the job table to take in.
 */
export function reviveJob(plain: FormatOneJob): Job {
  const history = historyFromPairs(plain.history);
  return {
    id: plain.id,
    connectionId: plain.connectionId,
    externalId: plain.externalId,
    framework: plain.framework,
    name: plain.name,
    queue: plain.queue,
    state: lastHistoryState(history),
    createdAtMs: plain.createdAtMs,
    createdAtReported: plain.createdAtReported,
    startedAtMs: plain.startedAtMs,
    completedAtMs: plain.completedAtMs,
    workerId: plain.workerId,
    details: detailsOf(plain.error, plain.stacktrace, plain.extensions),
    attempt: plain.attempt,
    maxRetries: plain.maxRetries,
    progress: plain.progress,
    history,
    lastEventMs: plain.lastEventMs,
    parentExternalId: null,
    rootExternalId: null,
  };
}

/** A job as snapshot format 1 stored it: its own fields for the details, history as pairs. */
export type FormatOneJob = Omit<Job, 'details' | 'parentExternalId' | 'rootExternalId'> & JobDetails;

/** The details object for these values; null when all are null. */
export function detailsOf(error: string | null, stacktrace: string | null, extensions: Record<string, unknown> | null): JobDetails | null {
  return error === null && stacktrace === null && extensions === null ? null : { error, stacktrace, extensions };
}

/** Details with every field null: what a job without details reads as. */
export const NO_DETAILS: JobDetails = Object.freeze({ error: null, stacktrace: null, extensions: null });

/** A job's details, all fields null when it has none. */
export function detailsOfJob(job: Job): JobDetails {
  return job.details ?? NO_DETAILS;
}

/** stateHistory as served: runs of the same state collapsed into their earliest entry. */
export function collapsedHistory(job: Job): HistoryEntry[] {
  return collapseHistory(job.history);
}

export function durationMsOf(job: Job): number | null {
  return job.startedAtMs !== null && job.completedAtMs !== null ? job.completedAtMs - job.startedAtMs : null;
}

/** When the current state began: the earliest entry of the trailing run of that state. */
export function stateChangedAtMs(job: Job): number | null {
  return currentRunStartMs(job.history);
}
