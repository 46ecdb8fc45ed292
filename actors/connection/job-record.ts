/**
 * One job as an object: what the views, the snapshot writer and the tests read, copied out
 * of the connection's job table (job-table.ts, where jobs live as rows of columns) in one
 * synchronous step, so a reader never sees a row that was freed and reused meanwhile. Its
 * fields are the columns of job-column-list.ts (texts as their JSON text, parsed by the
 * views), plus the job's identity and history.
 */
import type { JobState } from '../ingest/states.ts';
import { jsonText } from '../ingest/event-bytes.ts';
import type { JobColumnValues } from './job-column-list.ts';
import { collapseHistory, currentRunStartMs, historyFromPairs, lastHistoryState, type CompactHistory, type HistoryEntry } from './job-history.ts';

export type { HistoryEntry } from './job-history.ts';

export interface Job extends JobColumnValues {
  id: string;
  connectionId: string;
  externalId: string;
  /** the last entry of the history */
  state: JobState;
  /** every event's state and time, timestamp-ordered, packed (raw, not collapsed; see job-history.ts) */
  history: CompactHistory;
}

/** What of a job's columns snapshots before the column list had: the formats' jobs are read as this, the rest empty. */
const ABSENT_BEFORE_THE_LIST = { manualRetries: 0, logLines: 0, args: null, result: null, progressData: null, logs: null, attempts: null, parentExternalId: null, rootExternalId: null } as const;

/** A job as snapshot format 1 stored it: extensions as an object, history as pairs of numbers, no field added since. */
export type FormatOneJob = Omit<Job, keyof typeof ABSENT_BEFORE_THE_LIST | 'extensions' | 'state'> & { extensions: Record<string, unknown> | null };

/** A job read back from a format 1 snapshot, for the job table to take in. */
export function reviveJob(plain: FormatOneJob): Job {
  const history = historyFromPairs(plain.history);
  return {
    ...ABSENT_BEFORE_THE_LIST,
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
    error: plain.error,
    stacktrace: plain.stacktrace,
    extensions: plain.extensions === null ? null : jsonText(plain.extensions),
    attempt: plain.attempt,
    maxRetries: plain.maxRetries,
    progress: plain.progress,
    history,
    lastEventMs: plain.lastEventMs,
  };
}

/** stateHistory as served: runs of the same state collapsed into their earliest entry. */
export function collapsedHistory(job: Job): HistoryEntry[] {
  return collapseHistory(job.history);
}

export function durationMsOf(job: Job): number | null {
  return runDurationMs(job.state, job.startedAtMs, job.completedAtMs);
}

/**
 * How long the current run took: its completedAt minus its startedAt. Null while it runs
 * (`active`), while either is unknown, and when the completion came before the start: then
 * it is an earlier run's (a late event of it), never a negative duration.
 */
export function runDurationMs(state: JobState, startedAtMs: number | null, completedAtMs: number | null): number | null {
  if (state === 'active' || startedAtMs === null || completedAtMs === null || completedAtMs < startedAtMs) return null;
  return completedAtMs - startedAtMs;
}

/** When the current state began: the earliest entry of the trailing run of that state. */
export function stateChangedAtMs(job: Job): number | null {
  return currentRunStartMs(job.history);
}
