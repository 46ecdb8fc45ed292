/**
 * Byte estimates for the per-connection budgets: an event's size as ingested (daily
 * budget) and a job's size as retained (memory budget). Estimates, not measurements:
 * characters of every client string plus the serialized size of free-form objects plus a
 * fixed overhead, so they are cheap, deterministic (replay rebuilds the same totals) and
 * grow with exactly what a client controls. A maximal job (50,000-character stacktrace,
 * 10,000-character error, 64 KB extensions) counts ~126 KB; a typical Celery job ~1 KB.
 */
import type { NormalizedEvent } from './normalized-event.ts';

/** what an event costs beyond its strings (fields, numbers, framing in the log) */
export const EVENT_OVERHEAD_BYTES = 64;
/** what a job costs beyond its own strings: the measured heap per job, indexes included (docs/performance.md) */
export const JOB_OVERHEAD_BYTES = 700;
/** one state-history entry (stored as one double since history packing; the budget kept its earlier two) */
export const HISTORY_ENTRY_BYTES = 16;

// Each extensions/metadata object is measured once: decide measures it, and evolve (same object on the live path) reuses it.
const serializedSizes = new WeakMap<object, number>();

/** For the validator, which serializes the object anyway to check its size limit. */
export function rememberJsonBytes(value: object, size: number): void {
  serializedSizes.set(value, size);
}

export function jsonBytes(value: Record<string, unknown> | null | undefined): number {
  if (value == null) return 0;
  let size = serializedSizes.get(value);
  if (size === undefined) {
    size = JSON.stringify(value).length;
    serializedSizes.set(value, size);
  }
  return size;
}

const length = (value: string | null | undefined): number => (value == null ? 0 : value.length);

export function eventBytes(event: NormalizedEvent): number {
  switch (event.kind) {
    case 'job':
      return (
        EVENT_OVERHEAD_BYTES +
        event.externalId.length +
        event.name.length +
        length(event.queue) +
        length(event.workerId) +
        length(event.error) +
        length(event.stacktrace) +
        jsonBytes(event.extensions)
      );
    case 'worker': {
      let bytes = EVENT_OVERHEAD_BYTES + event.externalId.length + event.hostname.length + jsonBytes(event.metadata);
      for (const queue of event.queues ?? []) bytes += queue.length;
      return bytes;
    }
    case 'queue':
      return EVENT_OVERHEAD_BYTES + event.name.length + jsonBytes(event.extensions);
  }
}

/** The fields of a job a client can make large; names, queues and workers are shared strings. */
export interface RetainedJobFields {
  externalId: string;
  /** error, stacktrace and extensions; null when all are null */
  details: { error: string | null; stacktrace: string | null; extensions: Record<string, unknown> | null } | null;
  history: readonly number[];
}

export function jobBytes(job: RetainedJobFields): number {
  return retainedJobBytes(job.externalId.length, job.details, job.history.length);
}

/** `jobBytes` from a job's fields as the job table holds them. */
export function retainedJobBytes(externalIdLength: number, details: RetainedJobFields['details'], historyLength: number): number {
  return (
    JOB_OVERHEAD_BYTES +
    externalIdLength +
    length(details?.error ?? null) +
    length(details?.stacktrace ?? null) +
    jsonBytes(details?.extensions ?? null) +
    historyLength * HISTORY_ENTRY_BYTES
  );
}

/**
 * The most a job event can add to retained bytes: a whole new job, or for a known job a
 * history entry plus its large fields (an upper bound: they may replace equal values).
 */
export function jobGrowthBytes(event: NormalizedEvent & { kind: 'job' }, isNewJob: boolean): number {
  const large = length(event.error) + length(event.stacktrace) + jsonBytes(event.extensions);
  return isNewJob ? JOB_OVERHEAD_BYTES + event.externalId.length + large + HISTORY_ENTRY_BYTES : large + HISTORY_ENTRY_BYTES;
}
