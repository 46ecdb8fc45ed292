/**
 * The audit log on its own: newest first with filters and a cursor, bounded by count and
 * by age (by the entries' own times, so any order of applying keeps the same ones), and
 * a snapshot of one partition's scope holding the entries that came through it.
 */
import { describe, expect, test } from 'bun:test';
import { AuditLog, type AuditEntry, type AuditRecord } from '../../actors/audit/audit-log.ts';
import { partitionOf } from '../../actors/partition-of.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const DAY = 86_400_000;

function entry(n: number, fields: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `e${String(n).padStart(4, '0')}`,
    atMs: T0 + n * 1_000,
    userId: 'u1',
    email: 'ada@example.com',
    address: '127.0.0.1',
    action: 'job.revoke',
    target: null,
    teamId: 't1',
    connectionId: null,
    outcome: 'success',
    status: 200,
    error: null,
    ...fields,
  };
}

const record = (value: AuditEntry, connectionId?: string): AuditRecord => ({ t: 'audit.recorded', entry: value, ...(connectionId === undefined ? {} : { connectionId }) });
const ids = (entries: AuditEntry[]) => entries.map((each) => each.id);

describe('the audit log', () => {
  test('reads newest first, filtered by team, user, action and outcome, a page at a time', () => {
    const log = new AuditLog();
    for (let n = 0; n < 10; n++) log.evolve(record(entry(n, { teamId: n % 2 === 0 ? 't1' : 't2', outcome: n === 7 ? 'denied' : 'success', action: n === 3 ? 'member.add' : 'job.revoke', userId: n === 5 ? 'u2' : 'u1' })));
    const nowMs = T0 + 60_000;
    expect(ids(log.query({ limit: 3, nowMs }).entries)).toEqual(['e0009', 'e0008', 'e0007']);
    const first = log.query({ limit: 2, nowMs, teamIds: new Set(['t2']) });
    expect([ids(first.entries), first.more]).toEqual([['e0009', 'e0007'], true]);
    const second = log.query({ limit: 2, nowMs, teamIds: new Set(['t2']), before: first.entries.at(-1)! });
    expect(ids(second.entries)).toEqual(['e0005', 'e0003']);
    const last = log.query({ limit: 2, nowMs, teamIds: new Set(['t2']), before: second.entries.at(-1)! });
    expect([ids(last.entries), last.more]).toEqual([['e0001'], false]);
    expect(ids(log.query({ limit: 10, nowMs, outcome: 'denied' }).entries)).toEqual(['e0007']);
    expect(ids(log.query({ limit: 10, nowMs, action: 'member.add' }).entries)).toEqual(['e0003']);
    expect(ids(log.query({ limit: 10, nowMs, userId: 'u2' }).entries)).toEqual(['e0005']);
    expect(ids(log.query({ limit: 10, nowMs, teamId: 't1', teamIds: new Set(['t2']) }).entries)).toEqual([]);
    // an entry of no team (a sign-in) is for the instance admin only
    log.evolve(record(entry(20, { teamId: null, action: 'auth.login' })));
    expect(ids(log.query({ limit: 1, nowMs: T0 + DAY, teamIds: new Set(['t1', 't2']) }).entries)).toEqual(['e0009']);
  });

  test('at most entriesMax are kept, the oldest by time dropped first, whatever order they arrive in', () => {
    const inOrder = new AuditLog({ retentionMs: 90 * DAY, entriesMax: 5 });
    const shuffled = new AuditLog({ retentionMs: 90 * DAY, entriesMax: 5 });
    const entries = Array.from({ length: 12 }, (_, n) => entry(n));
    for (const each of entries) inOrder.evolve(record(each));
    for (const n of [7, 2, 11, 0, 9, 4, 10, 1, 8, 3, 6, 5]) shuffled.evolve(record(entries[n]!));
    expect(inOrder.size).toBe(5);
    expect(ids(inOrder.query({ limit: 10, nowMs: T0 + DAY }).entries)).toEqual(['e0011', 'e0010', 'e0009', 'e0008', 'e0007']);
    expect(shuffled.toSnapshot()).toEqual(inOrder.toSnapshot());
    inOrder.evolve(record(entries[11]!)); // a replay of one already kept changes nothing
    expect(inOrder.size).toBe(5);
  });

  test('entries older than the retention are dropped as newer ones arrive, and never read', () => {
    const log = new AuditLog({ retentionMs: 90 * DAY, entriesMax: 1_000 });
    log.evolve(record(entry(0)));
    log.evolve(record(entry(1, { atMs: T0 + 10 * DAY })));
    expect(ids(log.query({ limit: 10, nowMs: T0 + 90 * DAY - 1 }).entries)).toEqual(['e0001', 'e0000']);
    expect(ids(log.query({ limit: 10, nowMs: T0 + 90 * DAY + 1 }).entries)).toEqual(['e0001']);
    log.evolve(record(entry(2, { atMs: T0 + 91 * DAY })));
    expect(log.size).toBe(2);
  });

  test('many entries dropped are compacted away, and what is kept stays in order', () => {
    const log = new AuditLog({ retentionMs: 90 * DAY, entriesMax: 100 });
    for (let n = 0; n < 5_000; n++) log.evolve(record(entry(n)));
    expect(log.size).toBe(100);
    expect(log.toSnapshot().map((stored) => stored.entry.id)).toEqual(Array.from({ length: 100 }, (_, n) => entry(4_900 + n).id));
  });

  test("a partition's snapshot holds the entries that came through its connections; the accounts', the others", () => {
    const log = new AuditLog();
    const partitions = 4;
    const connections = ['c-a', 'c-b', 'c-c', 'c-d', 'c-e'];
    log.evolve(record(entry(0, { action: 'auth.login' })));
    connections.forEach((connectionId, n) => log.evolve(record(entry(n + 1, { connectionId }), connectionId)));
    const accounts = log.toSnapshot({ accounts: true, connections: 'none' });
    expect(accounts.map((stored) => stored.entry.id)).toEqual(['e0000']);
    const byPartition = Array.from({ length: partitions }, (_, partition) => log.toSnapshot({ accounts: false, connections: { partition, partitions } }));
    for (const [partition, stored] of byPartition.entries()) {
      expect(stored.every((each) => partitionOf(each.via!, partitions) === partition)).toBe(true);
    }
    const restored = new AuditLog();
    for (const part of [accounts, ...byPartition]) restored.restore(structuredClone(part));
    expect(restored.toSnapshot()).toEqual(log.toSnapshot());
  });
});
