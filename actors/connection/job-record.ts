/**
 * One job as the connection actor holds it, and the merge rules of the decisions:
 * the event with the newest timestamp decides the state (ties: later arrival); an older
 * event never moves the job backwards but still lands in the history in timestamp
 * order; scalar fields take a newer non-null value, and an older event only fills gaps.
 */
import type { JobEvent } from '../ingest/normalized-event.ts';
import type { Framework, JobState } from '../ingest/states.ts';
import { collapseHistory, currentRunStartMs, historyFromPairs, insertHistoryEntry, lastHistoryState, type CompactHistory, type HistoryEntry } from './job-history.ts';

export type { HistoryEntry } from './job-history.ts';

/**
 * What few jobs have and only the detail view and the list's error column read. One field
 * for the three keeps a job at 18 fields, which JSC gives a 160-byte object; with each its
 * own field a job took 224 bytes. Replaced whole when a field changes, never mutated, so a
 * shallow copy of a job (a snapshot's pre-image) stays a copy.
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
}

export function newJob(id: string, connectionId: string, event: JobEvent): Job {
  return {
    id,
    connectionId,
    externalId: event.externalId,
    framework: event.framework,
    name: event.name,
    queue: null,
    state: event.state,
    createdAtMs: event.atMs,
    createdAtReported: false,
    startedAtMs: null,
    completedAtMs: null,
    workerId: null,
    details: null,
    attempt: 1,
    maxRetries: null,
    progress: null,
    history: [],
    lastEventMs: Number.NEGATIVE_INFINITY,
  };
}

/**
 * A job read back from a format 1 snapshot (its history as pairs of numbers), rebuilt
 * with the same field order as `newJob` (so live and restored jobs share one object
 * shape) and with repeated strings shared; decoded objects were about twice the size of
 * live ones.
 */
export function reviveJob(plain: FormatOneJob, share: (value: string) => string): Job {
  const history = historyFromPairs(plain.history);
  return {
    id: plain.id,
    connectionId: share(plain.connectionId),
    externalId: plain.externalId,
    framework: share(plain.framework) as Framework,
    name: share(plain.name),
    queue: plain.queue === null ? null : share(plain.queue),
    state: lastHistoryState(history),
    createdAtMs: plain.createdAtMs,
    createdAtReported: plain.createdAtReported,
    startedAtMs: plain.startedAtMs,
    completedAtMs: plain.completedAtMs,
    workerId: plain.workerId === null ? null : share(plain.workerId),
    details: detailsOf(plain.error, plain.stacktrace, plain.extensions),
    attempt: plain.attempt,
    maxRetries: plain.maxRetries,
    progress: plain.progress,
    history,
    lastEventMs: plain.lastEventMs,
  };
}

/** A job as snapshot format 1 stored it: its own fields for the details, history as pairs. */
export type FormatOneJob = Omit<Job, 'details'> & JobDetails;

/** The details object for these values; null when all are null. */
export function detailsOf(error: string | null, stacktrace: string | null, extensions: Record<string, unknown> | null): JobDetails | null {
  return error === null && stacktrace === null && extensions === null ? null : { error, stacktrace, extensions };
}

const NO_DETAILS: JobDetails = { error: null, stacktrace: null, extensions: null };

/** A job's details, all fields null when it has none. */
export function detailsOfJob(job: Job): JobDetails {
  return job.details ?? NO_DETAILS;
}

/** Records a state at a time; the job's state is always the last entry's. */
export function insertHistory(job: Job, entry: HistoryEntry): void {
  insertHistoryEntry(job.history, entry.state, entry.atMs);
  job.state = lastHistoryState(job.history);
}

/** Applies an event to a job. Returns true when the event is the newest so far. */
export function mergeJobEvent(job: Job, event: JobEvent): boolean {
  const isNewest = event.atMs >= job.lastEventMs;
  insertHistory(job, { state: event.state, atMs: event.atMs });
  const take = <K extends keyof Job>(key: K, value: Job[K] | undefined): void => {
    if (value !== undefined && (isNewest || job[key] === null)) job[key] = value;
  };
  take('queue', event.queue);
  take('workerId', event.workerId);
  take('maxRetries', event.maxRetries);
  take('progress', event.progress);
  take('startedAtMs', event.startedAtMs);
  take('completedAtMs', event.completedAtMs);
  const takeDetail = <K extends keyof JobDetails>(key: K, value: JobDetails[K] | undefined): void => {
    const details = detailsOfJob(job);
    if (value !== undefined && (isNewest || details[key] === null)) job.details = { ...details, [key]: value };
  };
  takeDetail('error', event.error);
  takeDetail('stacktrace', event.stacktrace);
  takeDetail('extensions', event.extensions);
  if (isNewest) {
    job.name = event.name;
    job.framework = event.framework;
    if (event.attempt !== undefined) job.attempt = event.attempt;
    job.lastEventMs = event.atMs;
  }
  mergeCreatedAt(job, event, isNewest);
  return isNewest;
}

function mergeCreatedAt(job: Job, event: JobEvent, isNewest: boolean): void {
  if (event.createdAtMs !== undefined) {
    if (isNewest || !job.createdAtReported) {
      job.createdAtMs = event.createdAtMs;
      job.createdAtReported = true;
    }
  } else if (!job.createdAtReported && event.atMs < job.createdAtMs) {
    job.createdAtMs = event.atMs;
  }
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
