/**
 * A job's earlier runs, kept as one JSON text per job (the `attempts` text column): when a
 * new run begins, the run the job held (its attempt, the state it reached, when it started
 * and finished, its worker, error and stack trace) is appended. The current run stays in
 * the job's own columns; the detail lists the earlier runs and then the current one.
 *
 * Bounded: at most ATTEMPTS_KEPT_MAX runs, in at most ATTEMPTS_TEXT_BYTES_MAX of text. Past
 * the bytes, the oldest runs' stack traces go first (their errors stay), then the oldest runs.
 */
import type { JobState } from '../ingest/states.ts';

export interface EarlierAttempt {
  attempt: number;
  /** the state the run reached; `failed` for a run that failed and was retried */
  state: JobState;
  startedAtMs: number | null;
  finishedAtMs: number | null;
  workerId: string | null;
  error: string | null;
  stacktrace: string | null;
}

export const ATTEMPTS_KEPT_MAX = 100;
export const ATTEMPTS_TEXT_BYTES_MAX = 64 * 1024;

/** The state a run ended in, as its attempt entry says it: a run that was retried failed. */
export function outcomeOf(state: JobState): JobState {
  return state === 'retrying' ? 'failed' : state;
}

export function parseAttempts(text: string | null): EarlierAttempt[] {
  return text === null ? [] : (JSON.parse(text) as EarlierAttempt[]);
}

/** `text` with `run` appended, within the bounds. */
export function withAttempt(text: string | null, run: EarlierAttempt): string {
  const runs = parseAttempts(text);
  runs.push(run);
  return boundedText(runs);
}

/**
 * What a late event of an earlier attempt adds to that attempt's newest entry: the fields
 * it does not have yet, and a finished state where the entry has none. Null when no entry
 * has that attempt (then nothing is kept of the event's run).
 */
export function withLateFacts(text: string | null, attempt: number, facts: Partial<EarlierAttempt>): string | null {
  const runs = parseAttempts(text);
  const run = runs.findLast((each) => each.attempt === attempt);
  if (run === undefined) return null;
  for (const key of ['startedAtMs', 'finishedAtMs', 'workerId', 'error', 'stacktrace'] as const) {
    const value = facts[key];
    if (value !== undefined && value !== null && run[key] === null) (run as unknown as Record<string, unknown>)[key] = value;
  }
  if (facts.state !== undefined && !FINISHED_OUTCOMES.has(run.state)) run.state = outcomeOf(facts.state);
  return boundedText(runs);
}

const FINISHED_OUTCOMES = new Set<JobState>(['completed', 'failed', 'cancelled']);

function boundedText(runs: EarlierAttempt[]): string {
  while (runs.length > ATTEMPTS_KEPT_MAX) runs.shift();
  let text = JSON.stringify(runs);
  for (let oldest = 0; Buffer.byteLength(text) > ATTEMPTS_TEXT_BYTES_MAX && oldest < runs.length - 1; oldest++) {
    if (runs[oldest]!.stacktrace === null) continue;
    runs[oldest]!.stacktrace = null;
    text = JSON.stringify(runs);
  }
  while (Buffer.byteLength(text) > ATTEMPTS_TEXT_BYTES_MAX && runs.length > 1) {
    runs.shift();
    text = JSON.stringify(runs);
  }
  return text;
}
