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

// Each extensions/metadata object is serialized once: the validator serializes it to check its
// size, decide measures it, and evolve (same object on the live path) keeps the text.
const serializedTexts = new WeakMap<object, string>();

/** For the validator, which serializes the object anyway to check its size limit. */
export function rememberJson(value: object, text: string): void {
  serializedTexts.set(value, text);
}

export function jsonBytes(value: Record<string, unknown> | null | undefined): number {
  return value == null ? 0 : Buffer.byteLength(jsonText(value));
}

/** Bytes of a kept text (JSON), 0 for none: what the job table keeps of it. */
export function textBytes(text: string | null | undefined): number {
  return text == null ? 0 : Buffer.byteLength(text);
}

/** Bytes of what an event carries as texts: arguments, result, progress object, log lines. */
function payloadBytes(event: NormalizedEvent & { kind: 'job' }): number {
  return textBytes(event.args) + textBytes(event.result) + textBytes(event.progressData) + textBytes(event.logs);
}

/**
 * What an earlier attempt's entry adds to a job when a run ends (attempt-history.ts): its
 * error and trace move there from the job's own columns, so the entry's keys, times and
 * numbers are what is new.
 */
export const ATTEMPT_ENTRY_BYTES = 256;

/** The object as JSON, made once per object: the job table keeps extensions as this text. */
export function jsonText(value: Record<string, unknown>): string {
  let text = serializedTexts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    serializedTexts.set(value, text);
  }
  return text;
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
        jsonBytes(event.extensions) +
        payloadBytes(event)
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

/** The fields of a job a client can make large; names, queues and workers are shared strings, texts are JSON texts. */
export interface RetainedJobFields {
  externalId: string;
  error: string | null;
  stacktrace: string | null;
  extensions: string | null;
  args: string | null;
  result: string | null;
  progressData: string | null;
  logs: string | null;
  attempts: string | null;
  history: readonly number[];
}

export function jobBytes(job: RetainedJobFields): number {
  const texts = [job.extensions, job.args, job.result, job.progressData, job.logs, job.attempts].reduce((sum, text) => sum + textBytes(text), 0);
  return retainedJobBytes(job.externalId.length + length(job.error) + length(job.stacktrace) + texts, job.history.length);
}

/** `jobBytes` from what the job table holds: the characters of its externalId, error and stacktrace, the bytes of its texts, and its history's length. */
export function retainedJobBytes(characters: number, historyLength: number): number {
  return JOB_OVERHEAD_BYTES + characters + historyLength * HISTORY_ENTRY_BYTES;
}

/**
 * The most a job event can add to retained bytes: a whole new job, or for a known job a
 * history entry plus its large fields (an upper bound: they may replace equal values).
 */
export function jobGrowthBytes(event: NormalizedEvent & { kind: 'job' }, isNewJob: boolean): number {
  const large = length(event.error) + length(event.stacktrace) + jsonBytes(event.extensions) + payloadBytes(event);
  // a known job's event may end its run: the run's entry among the earlier attempts
  const runEnds = event.attempt !== undefined || event.startedAtMs !== undefined ? ATTEMPT_ENTRY_BYTES : 0;
  return isNewJob ? JOB_OVERHEAD_BYTES + event.externalId.length + large + HISTORY_ENTRY_BYTES : large + HISTORY_ENTRY_BYTES + runEnds;
}
