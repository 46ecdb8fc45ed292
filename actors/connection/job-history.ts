/**
 * A job's state history, compact: a flat array of numbers, `[atMs, stateCode, atMs,
 * stateCode, ...]` in timestamp order (ties: arrival order). At a million jobs an
 * object per entry cost more than the rest of the job; a double array is 16 bytes an
 * entry and one allocation per job.
 */
import { JOB_STATES, type JobState } from '../ingest/states.ts';

export interface HistoryEntry {
  state: JobState;
  atMs: number;
}

export type CompactHistory = number[];

/** Bounds memory per job; the oldest entries go first. */
export const HISTORY_ENTRIES_MAX = 200;

const STATE_CODE = new Map<JobState, number>(JOB_STATES.map((state, code) => [state, code]));

export function stateOfCode(code: number): JobState {
  return JOB_STATES[code]!;
}

/** Inserts after entries with an equal time, so among ties the later arrival is last. */
export function insertHistoryEntry(history: CompactHistory, state: JobState, atMs: number): void {
  let index = history.length;
  while (index > 0 && history[index - 2]! > atMs) index -= 2;
  history.splice(index, 0, atMs, STATE_CODE.get(state)!);
  if (history.length > HISTORY_ENTRIES_MAX * 2) history.splice(0, 2);
}

export function lastHistoryState(history: CompactHistory): JobState {
  return stateOfCode(history[history.length - 1]!);
}

/** Runs of the same state collapsed into their earliest entry (the served stateHistory). */
export function collapseHistory(history: CompactHistory): HistoryEntry[] {
  const collapsed: HistoryEntry[] = [];
  let previousCode = -1;
  for (let i = 0; i < history.length; i += 2) {
    if (history[i + 1] === previousCode) continue;
    previousCode = history[i + 1]!;
    collapsed.push({ atMs: history[i]!, state: stateOfCode(previousCode) });
  }
  return collapsed;
}

/** When the current state began: the earliest entry of the trailing run of that state. */
export function currentRunStartMs(history: CompactHistory): number | null {
  let index = history.length - 2;
  if (index < 0) return null;
  const code = history[index + 1];
  while (index >= 2 && history[index - 1] === code) index -= 2;
  return history[index]!;
}
