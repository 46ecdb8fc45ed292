/**
 * The small pieces persistence's larger tests rely on without naming them: which file
 * names recovery recognises (a wrong match would replay a stray file or miss a segment),
 * the errors' stable names and codes (the process entry reacts to them), invariants, and
 * the recovery decision table, which must say what the Durability table of docs/operations.md says.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DurabilityError, RecoveryRefusedError, describeError } from '../../persistence/errors.ts';
import { parseDataFileName, segmentFileName, snapshotFileName, snapshotTempFileName } from '../../persistence/file-names.ts';
import { InvariantViolation, invariant } from '../../persistence/invariant.ts';
import { RECOVERY_DECISIONS, type LogCondition, type SnapshotCondition } from '../../persistence/recovery-decisions.ts';

const SEQ = '00000000000000000042';

describe('data file names', () => {
  test('the three kinds are recognised with their seq, and the names the writers make parse back', () => {
    expect(parseDataFileName(`log-${SEQ}.seg`)).toEqual({ kind: 'segment', name: `log-${SEQ}.seg`, seq: 42 });
    expect(parseDataFileName(`snapshot-${SEQ}.snap`)).toEqual({ kind: 'snapshot', name: `snapshot-${SEQ}.snap`, seq: 42 });
    expect(parseDataFileName(`snapshot-${SEQ}.tmp`)).toEqual({ kind: 'snapshot-temp', name: `snapshot-${SEQ}.tmp`, seq: 42 });
    for (const name of [segmentFileName(7), snapshotFileName(7), snapshotTempFileName(7)]) expect(parseDataFileName(name)?.seq).toBe(7);
  });

  test('mixed prefixes and extensions, other files, prefixes and suffixes around a valid name, and unsafe seqs are not data files', () => {
    for (const name of [
      `log-${SEQ}.snap`,
      `log-${SEQ}.tmp`,
      `snapshot-${SEQ}.seg`,
      `backup-log-${SEQ}.seg`,
      `log-${SEQ}.seg.bak`,
      `log-${SEQ.slice(1)}.seg`,
      'LOCK',
      'session-secret',
      'log-99999999999999999999.seg', // beyond 2^53: not a safe integer
    ]) {
      expect(parseDataFileName(name)).toBeUndefined();
    }
  });
});

describe('errors and invariants', () => {
  test('each error carries its stable name and code, and describeError reads any thrown value', () => {
    const refused = new RecoveryRefusedError('damaged');
    const failed = new DurabilityError('disk full');
    expect([refused.name, refused.code, refused.message]).toEqual(['RecoveryRefusedError', 'RECOVERY_REFUSED', 'damaged']);
    expect([failed.name, failed.code]).toEqual(['DurabilityError', 'DURABILITY_FAILED']);
    expect(describeError(failed)).toBe('disk full');
    expect(describeError('plain text')).toBe('plain text');
    expect(describeError(42)).toBe('42');
  });

  test('a false invariant throws InvariantViolation with the message; a true one does nothing', () => {
    expect(() => invariant(1 === 1, 'never')).not.toThrow();
    const error = (() => {
      try {
        invariant(false, 'the log went backwards');
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(InvariantViolation);
    expect(error?.name).toBe('InvariantViolation');
    expect(error?.message).toBe('the log went backwards');
  });
});

describe('recovery decision table', () => {
  /** The Durability section's table: snapshot row -> log-tail column -> cell text. */
  function readmeTable(): Record<string, Record<string, string>> {
    const operations = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'operations.md'), 'utf8');
    const lines = operations.split('\n');
    const header = lines.findIndex((line) => line.startsWith('| snapshot \\ log tail |'));
    expect(header).toBeGreaterThan(-1);
    const columns = lines[header]!.split('|').slice(2, -1).map((cell) => cell.trim());
    const table: Record<string, Record<string, string>> = {};
    for (const line of lines.slice(header + 2, header + 5)) {
      const [row, ...cells] = line.split('|').slice(1, -1).map((cell) => cell.trim());
      table[row!] = Object.fromEntries(cells.map((cell, index) => [columns[index]!, cell]));
    }
    return table;
  }

  /** What a cell's words mean as a decision. */
  function decisionOf(cell: string) {
    if (cell.startsWith('refuse')) return { action: 'refuse' };
    const base = cell.includes('fall back') ? 'fallback' : cell.includes('seq 1') ? 'empty-state' : 'newest-snapshot';
    return { action: 'replay', base, cutTornTail: cell.startsWith('cut') };
  }

  test('every cell decides what docs/operations.md says', () => {
    const table = readmeTable();
    const snapshots: SnapshotCondition[] = ['ok', 'missing', 'corrupt'];
    const logs: LogCondition[] = ['clean', 'torn', 'corrupt'];
    expect(Object.keys(table)).toEqual(snapshots);
    for (const snapshot of snapshots) {
      for (const log of logs) {
        expect({ snapshot, log, decision: RECOVERY_DECISIONS[snapshot][log] }).toEqual({ snapshot, log, decision: decisionOf(table[snapshot]![log]!) as never });
      }
    }
  });
});
