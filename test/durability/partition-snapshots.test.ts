/**
 * The engine's partition scope (cluster mode, docs/cluster.md): a
 * snapshot of one partition's connections or of the accounts alone, several such
 * snapshots restored in sequence and reconciled with the accounts, a retention record
 * scoped to one partition, and a replayed `connection.created` that keeps the actor a
 * newer partition snapshot restored.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog, type EngineRecord } from '../../actors/engine.ts';
import type { SnapshotChunk, SnapshotScope } from '../../actors/engine-snapshot.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { LIMITS, workload } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

const PARTITIONS = 2;
const ACCOUNTS_ONLY: SnapshotScope = { accounts: true, connections: 'none' };
const partitionScope = (partition: number): SnapshotScope => ({ accounts: false, connections: { partition, partitions: PARTITIONS } });

function newEngine(clock = new ManualClock(T0)) {
  const engine = new Engine({ clock, log: inMemoryLog, limits: LIMITS });
  return { engine, accounts: new AccountService(engine, 86_400_000, 'secret-for-tests'), connections: new ConnectionService(engine) };
}
type Opened = ReturnType<typeof newEngine>;

/** Connections until each partition holds at least two (ids are random UUIDs); the first of each has jobs, the others none. */
async function populated(): Promise<{ live: Opened; owner: Awaited<ReturnType<AccountService['addUser']>>; byPartition: string[][] }> {
  const live = newEngine();
  const owner = await live.accounts.addUser('admin@example.com', 'a long password!', true);
  const byPartition: string[][] = [[], []];
  for (let round = 0; byPartition.some((ids) => ids.length < 2); round++) {
    if (round >= 40) throw new Error('40 random ids did not give two per partition');
    const { connection, apiKey } = await live.connections.create(await withOwnTeam(live.engine, owner), `c${round}`, undefined);
    const ids = byPartition[partitionOf(connection.id, PARTITIONS)]!;
    ids.push(connection.id);
    if (ids.length === 1) await workload(live, apiKey, connection.id, round);
  }
  return { live, owner, byPartition };
}

function chunksOf(engine: Engine, scope?: SnapshotScope): SnapshotChunk[] {
  // structuredClone: what a restorer reads back is a decoded copy, never the live objects
  return [...engine.takeSnapshot(scope).chunks].map((chunk) => structuredClone(chunk));
}

function restoreInSequence(target: Engine, snapshots: SnapshotChunk[][]) {
  const restorer = target.restorer();
  for (const snapshot of snapshots) for (const chunk of snapshot) restorer.restore(chunk);
  return restorer.reconcileWithAccounts();
}

let fixture: Awaited<ReturnType<typeof populated>>;
beforeAll(async () => {
  fixture = await populated();
});

describe('a scoped snapshot', () => {
  test("holds only its partition's connections and jobs, and the accounts only when asked", () => {
    const { live, byPartition } = fixture;
    for (const partition of [0, 1]) {
      const chunks = chunksOf(live.engine, partitionScope(partition));
      expect(chunks[0]!.k).toBe('header');
      expect(chunks.at(-1)).toEqual({ k: 'end' });
      expect(chunks.some((chunk) => chunk.k === 'accounts')).toBe(false);
      const connectionIds = chunks.flatMap((chunk) => (chunk.k === 'connection' ? [chunk.id] : []));
      expect(connectionIds.sort()).toEqual([...byPartition[partition]!].sort());
      const jobConnections = new Set(chunks.flatMap((chunk) => (chunk.k === 'jobColumns' ? [chunk.connectionId] : [])));
      expect(jobConnections.size).toBeGreaterThan(0);
      for (const id of jobConnections) expect(byPartition[partition]).toContain(id);
    }
    const accountsOnly = chunksOf(live.engine, ACCOUNTS_ONLY);
    expect(accountsOnly.map((chunk) => chunk.k)).toEqual(['header', 'accounts', 'end']);
    expect(chunksOf(live.engine, { accounts: true, connections: { partition: 0, partitions: PARTITIONS } }).map((chunk) => chunk.k)).toContain('accounts');
  });

  test("copies on write only its own partition's jobs, until released", () => {
    const { live, byPartition } = fixture;
    const own = live.engine.connection(byPartition[0]![0]!)!;
    const other = live.engine.connection(byPartition[1]![0]!)!;
    const snapshot = live.engine.takeSnapshot(partitionScope(0));
    expect(own.jobs.beforeMutate).not.toBeNull();
    expect(other.jobs.beforeMutate).toBeNull();
    snapshot.release();
    expect(own.jobs.beforeMutate).toBeNull();
  });
});

describe('scoped snapshots restored in sequence', () => {
  test('equal the whole state, whatever their order, with jobs indexed at each snapshot\'s end', () => {
    const { live, byPartition } = fixture;
    const expected = dumpEngine(live.engine, T0);
    const p0 = chunksOf(live.engine, partitionScope(0));
    const p1 = chunksOf(live.engine, partitionScope(1));
    const accounts = chunksOf(live.engine, ACCOUNTS_ONLY);
    for (const order of [[p0, p1, accounts], [accounts, p1, p0]]) {
      const { engine } = newEngine();
      expect(restoreInSequence(engine, order)).toEqual({ created: [], dropped: [] });
      expect(dumpEngine(engine, T0)).toEqual(expected);
    }
    // each snapshot's own end indexes its jobs in bulk, before the next snapshot arrives
    const { engine } = newEngine();
    const restorer = engine.restorer();
    for (const chunk of p0) restorer.restore(chunk);
    const restored = engine.connection(byPartition[0]![0]!)!;
    expect(restored.jobs.size).toBe(live.engine.connection(byPartition[0]![0]!)!.jobs.size);
    expect(restored.jobs.size).toBeGreaterThan(0);
  });

  test('taken at different moments, are reconciled with the accounts: a connection created since gets an empty actor, a deleted one is dropped', async () => {
    const { live, owner, byPartition } = await populated();
    const p0 = chunksOf(live.engine, partitionScope(0));
    const p1 = chunksOf(live.engine, partitionScope(1));
    const deleted = byPartition[0]![0]!;
    await live.connections.delete(await withOwnTeam(live.engine, owner), deleted);
    const { connection: added } = await live.connections.create(await withOwnTeam(live.engine, owner), 'added later', undefined);
    const accounts = chunksOf(live.engine, ACCOUNTS_ONLY);

    const { engine } = newEngine();
    expect(restoreInSequence(engine, [p0, p1, accounts])).toEqual({ created: [added.id], dropped: [deleted] });
    expect(engine.connection(deleted)).toBeUndefined();
    expect(engine.connection(added.id)?.jobs.size).toBe(0);
    expect(dumpEngine(engine, T0)).toEqual(dumpEngine(live.engine, T0));
  });

  test('a reconcile before a snapshot has ended is refused, not a silent loss of its jobs', () => {
    const { live } = fixture;
    const { engine } = newEngine();
    const restorer = engine.restorer();
    for (const chunk of chunksOf(live.engine, partitionScope(0)).slice(0, -1)) restorer.restore(chunk);
    expect(() => restorer.reconcileWithAccounts()).toThrow(/without their end chunk/);
  });
});

test("a connection.created replayed after its partition's snapshot keeps the restored actor and its jobs", () => {
  const { live, byPartition } = fixture;
  const id = byPartition[0]![0]!;
  const { engine } = newEngine();
  restoreInSequence(engine, [chunksOf(live.engine, ACCOUNTS_ONLY), chunksOf(live.engine, partitionScope(0)), chunksOf(live.engine, partitionScope(1))]);
  const restored = engine.connection(id)!;
  const jobs = restored.jobs.size;
  expect(jobs).toBeGreaterThan(0);
  engine.evolve({ t: 'connection.created', connection: live.engine.accounts.connections.get(id)! });
  expect(engine.connection(id)).toBe(restored);
  expect(restored.jobs.size).toBe(jobs);
});

describe('a retention record', () => {
  const RETAINED_UNTIL_MS = T0 + LIMITS.retentionMs + 86_400_000; // past every job of the workload

  function restoredCopy(): Engine {
    const { engine } = newEngine();
    restoreInSequence(engine, [chunksOf(fixture.live.engine)]);
    return engine;
  }
  const jobsIn = (engine: Engine, ids: string[]) => ids.map((id) => engine.connection(id)!.jobs.size);

  test("with a partition expires only that partition's connections", () => {
    const { byPartition } = fixture;
    for (const partition of [0, 1]) {
      const engine = restoredCopy();
      const other = byPartition[1 - partition]!;
      const before = jobsIn(engine, other);
      expect(before.some((size) => size > 0)).toBe(true);
      expect(jobsIn(engine, byPartition[partition]!).some((size) => size > 0)).toBe(true);
      engine.evolve({ t: 'retention', atMs: RETAINED_UNTIL_MS, partition, partitions: PARTITIONS });
      expect(jobsIn(engine, byPartition[partition]!).every((size) => size === 0)).toBe(true);
      expect(jobsIn(engine, other)).toEqual(before);
    }
  });

  test('without one (every record before partitions) expires every connection', () => {
    const { byPartition } = fixture;
    const engine = restoredCopy();
    expect(jobsIn(engine, byPartition[0]!).some((size) => size > 0) && jobsIn(engine, byPartition[1]!).some((size) => size > 0)).toBe(true);
    engine.evolve({ t: 'retention', atMs: RETAINED_UNTIL_MS });
    expect(jobsIn(engine, byPartition.flat()).every((size) => size === 0)).toBe(true);
  });
});

test('recovery in stream order: an accounts snapshot older than a partition snapshot keeps the connection created between them only if drops wait for the replay', async () => {
  // the live engine's records in log order, as the stream holds them
  const records: EngineRecord[] = [];
  const engine = new Engine({ clock: new ManualClock(T0), log: { append: async (record) => records.push(record as EngineRecord) }, limits: LIMITS });
  const live = { engine, accounts: new AccountService(engine, 86_400_000, 'secret-for-tests'), connections: new ConnectionService(engine) };
  const owner = await live.accounts.addUser('admin@example.com', 'a long password!', true);
  const accountsSnapshot = chunksOf(engine, ACCOUNTS_ONLY);
  const coveredByAccounts = records.length;
  const { connection, apiKey } = await live.connections.create(await withOwnTeam(live.engine, owner), 'created between the snapshots', undefined);
  await workload(live, apiKey, connection.id, 0);
  const partitionSnapshot = chunksOf(engine, partitionScope(partitionOf(connection.id, PARTITIONS)));
  const jobs = engine.connection(connection.id)!.jobs.size;
  expect(jobs).toBeGreaterThan(0);
  // what the replay applies: the accounts records after the accounts snapshot (the partition's are covered by its snapshot)
  const accountsTail = records.slice(coveredByAccounts).filter((record) => !('connectionId' in record) || record.t === 'connection.deleted');
  expect(accountsTail.some((record) => record.t === 'connection.created')).toBe(true);

  const recover = (dropBeforeReplay: boolean) => {
    const { engine: target } = newEngine();
    const restorer = target.restorer();
    for (const chunk of [...accountsSnapshot, ...partitionSnapshot]) restorer.restore(chunk);
    restorer.reconcileWithAccounts({ drop: dropBeforeReplay });
    for (const record of accountsTail) target.evolve(record);
    restorer.reconcileWithAccounts();
    return target.connection(connection.id)?.jobs.size;
  };
  expect(recover(false)).toBe(jobs);
  // dropping first loses them: the accounts did not know the connection yet, and the replayed create makes an empty actor
  expect(recover(true)).toBe(0);
});

describe('a partition taken up and let go by a running engine (cluster mode with standbys)', () => {
  /** An engine keeping only the partitions in `kept`, which a test changes as a node's keeping does. */
  function keepingEngine(kept: Set<number>) {
    const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS, holds: (id) => kept.has(partitionOf(id, PARTITIONS)) });
    const restorer = engine.restorer();
    for (const snapshot of [chunksOf(fixture.live.engine, ACCOUNTS_ONLY), chunksOf(fixture.live.engine, partitionScope(0))]) for (const chunk of snapshot) restorer.restore(chunk);
    restorer.reconcileWithAccounts();
    return engine;
  }

  test("a connection.created of a partition not kept makes no actor; one of a kept partition does", () => {
    const kept = new Set([0]);
    const engine = keepingEngine(kept);
    const { byPartition } = fixture;
    expect([...engine.connectionIds()].sort()).toEqual([...byPartition[0]!].sort());
    const template = fixture.live.engine.accounts.connections.get(byPartition[1]![0]!)!;
    const idIn = (partition: number): string => Array.from({ length: 64 }, (_, index) => `new-${index}`).find((id) => partitionOf(id, PARTITIONS) === partition)!;
    for (const partition of [0, 1]) engine.evolve({ t: 'connection.created', connection: { ...template, id: idIn(partition) } });
    expect(engine.connection(idIn(1))).toBeUndefined();
    expect(engine.connection(idIn(0))?.jobs.size).toBe(0);
    expect(engine.accounts.connections.has(idIn(1))).toBe(true);
  });

  test('taking up: the partition\'s snapshot restored into the running engine and reconciled equals the whole state', () => {
    const kept = new Set([0]);
    const engine = keepingEngine(kept);
    kept.add(1); // taking up: held from here on
    const restorer = engine.restorer();
    for (const chunk of chunksOf(fixture.live.engine, partitionScope(1))) restorer.restore(chunk);
    restorer.snapshotEnded({ wholeState: false });
    expect(restorer.reconcileWithAccounts()).toEqual({ created: [], dropped: [] });
    expect(dumpEngine(engine, T0)).toEqual(dumpEngine(fixture.live.engine, T0));
  });

  test("letting go: the partition's actors, jobs and audit entries are dropped, the other partition's kept; no listener hears of a deletion", () => {
    const kept = new Set([0, 1]);
    const engine = keepingEngine(kept);
    const restorer = engine.restorer();
    for (const chunk of chunksOf(fixture.live.engine, partitionScope(1))) restorer.restore(chunk);
    restorer.reconcileWithAccounts();
    const { byPartition } = fixture;
    const auditOf = (connectionId: string, id: string): EngineRecord => ({
      t: 'audit.recorded',
      connectionId,
      entry: { id, atMs: T0, userId: null, email: 'api key', address: '127.0.0.1', action: 'marker.add', target: null, teamId: null, connectionId, outcome: 'success', status: 201, error: null },
    });
    engine.evolve(auditOf(byPartition[0]![0]!, 'a0'));
    engine.evolve(auditOf(byPartition[1]![0]!, 'a1'));
    const told: string[] = [];
    engine.listen({ deleted: (connectionId) => told.push(connectionId) });
    const jobsOf1 = byPartition[1]!.reduce((sum, id) => sum + engine.connection(id)!.jobs.size, 0);
    expect(jobsOf1).toBeGreaterThan(0);
    expect(engine.dropConnectionsNotHeld()).toEqual({ connections: 0, jobs: 0, auditEntries: 0 }); // nothing to drop while both are kept
    kept.delete(1);
    expect(engine.dropConnectionsNotHeld()).toEqual({ connections: byPartition[1]!.length, jobs: jobsOf1, auditEntries: 1 });
    // not deleted: a live stream watching it goes on, relayed from a node keeping it
    expect(told).toEqual([]);
    expect([...engine.connectionIds()].sort()).toEqual([...byPartition[0]!].sort());
    expect(engine.audit.query({ limit: 10, nowMs: T0 }).entries.map((entry) => entry.id)).toEqual(['a0']);
    // the accounts still know the connection: nothing was recorded, another node keeps it
    expect(engine.accounts.connections.has(byPartition[1]![0]!)).toBe(true);
  });
});
