import { describe, expect, test } from 'bun:test';
import { collapseHistory, currentRunStartMs, entryAtMs, entryCode, historyFromPairs, lastHistoryState, packHistoryEntry } from '../../actors/connection/job-history.ts';
import { HISTORY_ENTRY_BYTES, jobBytes } from '../../actors/ingest/event-bytes.ts';

const T = 1_763_900_000_000;

describe('packed job history', () => {
  test('given times far apart, negative, or with a fraction, then each entry gives back its whole-millisecond time and its state', () => {
    for (const atMs of [0, -1, -5_000_000_000_000, 1, T, 500_000_000_000_000]) {
      for (const code of [0, 1, 7]) {
        expect([entryAtMs(packHistoryEntry(atMs, code)), entryCode(packHistoryEntry(atMs, code))]).toEqual([atMs, code]);
      }
    }
    expect(entryAtMs(packHistoryEntry(T + 0.75, 3))).toBe(T);
  });

  test('given a format 1 history of pairs, then it packs to the same entries', () => {
    const history = historyFromPairs([T, 1, T + 5, 3, T + 5, 3, T + 9, 5]);
    expect(lastHistoryState(history)).toBe('failed');
    expect(currentRunStartMs(history)).toBe(T + 9);
    expect(currentRunStartMs(history.slice(0, 3))).toBe(T + 5);
    expect(currentRunStartMs([])).toBeNull();
    expect(collapseHistory(history)).toEqual([
      { state: 'queued', atMs: T },
      { state: 'active', atMs: T + 5 },
      { state: 'failed', atMs: T + 9 },
    ]);
  });

  test('the memory budget counts every entry', () => {
    const job = { externalId: 'x', error: null, stacktrace: null, extensions: null, args: null, result: null, progressData: null, logs: null, attempts: null, history: [packHistoryEntry(T, 1)] };
    const withThree = { ...job, history: [packHistoryEntry(T, 1), packHistoryEntry(T + 1, 3), packHistoryEntry(T + 2, 4)] };
    expect(jobBytes(withThree) - jobBytes(job)).toBe(2 * HISTORY_ENTRY_BYTES);
  });
});
