/**
 * A job's state history, compact: one number per entry, `atMs * 16 + stateCode`, in
 * timestamp order (ties: arrival order). At a million jobs an object per entry cost more
 * than the rest of the job, and a pair of numbers per entry (format 1) twice what this
 * does: one double an entry and one allocation per job.
 *
 * Times are whole milliseconds (Date.parse and Date.now give nothing finer, and the API
 * prints milliseconds); a fraction would be dropped. Any time from year -17,800 to 19,800
 * stays exact (|atMs * 16| < 2^53).
 */
import { JOB_STATES, type JobState } from '../ingest/states.ts';

export interface HistoryEntry {
  state: JobState;
  atMs: number;
}

export type CompactHistory = number[];

/** Bounds memory per job; the oldest entries go first. */
export const HISTORY_ENTRIES_MAX = 200;

const CODES = 16;
if (JOB_STATES.length > CODES) throw new Error(`job-history packs a state into 4 bits; there are ${JOB_STATES.length} states`);

const STATE_CODE = new Map<JobState, number>(JOB_STATES.map((state, code) => [state, code]));

export function stateCodeOf(state: JobState): number {
  return STATE_CODE.get(state)!;
}

export function packHistoryEntry(atMs: number, code: number): number {
  return Math.floor(atMs) * CODES + code;
}

export function entryAtMs(entry: number): number {
  return Math.floor(entry / CODES);
}

export function entryCode(entry: number): number {
  return entry - entryAtMs(entry) * CODES;
}

/** History as format 1 stored it, `[atMs, stateCode, atMs, stateCode, ...]`, packed. */
export function historyFromPairs(pairs: readonly number[]): CompactHistory {
  const history = new Array<number>(pairs.length >> 1);
  for (let i = 0; i < history.length; i++) history[i] = packHistoryEntry(pairs[2 * i]!, pairs[2 * i + 1]!);
  return history;
}

export function stateOfCode(code: number): JobState {
  return JOB_STATES[code]!;
}

export function lastHistoryState(history: ArrayLike<number>): JobState {
  return stateOfCode(entryCode(history[history.length - 1]!));
}

/** Runs of the same state collapsed into their earliest entry (the served stateHistory). */
export function collapseHistory(history: ArrayLike<number>): HistoryEntry[] {
  const collapsed: HistoryEntry[] = [];
  let previousCode = -1;
  for (let index = 0; index < history.length; index++) {
    const entry = history[index]!;
    const code = entryCode(entry);
    if (code === previousCode) continue;
    previousCode = code;
    collapsed.push({ atMs: entryAtMs(entry), state: stateOfCode(code) });
  }
  return collapsed;
}

/** When the current state began: the earliest entry of the trailing run of that state (in `history` from `start` to `end`). */
export function currentRunStartMs(history: ArrayLike<number>, start = 0, end = history.length): number | null {
  let index = end - 1;
  if (index < start) return null;
  const code = entryCode(history[index]!);
  while (index > start && entryCode(history[index - 1]!) === code) index--;
  return entryAtMs(history[index]!);
}
