/**
 * Which partitions a node snapshots (src/partition-snapshots.ts), with a stand-in for the
 * cluster store: only those it writes, when their log passed SNAPSHOT_LOG_MB or the
 * interval passed with something to cover, each with its own scope; a quiet accounts
 * partition gets a keep-alive record first, so its subject never empties by max_age.
 */
import { expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, type EngineRecord } from '../../actors/engine.ts';
import type { SnapshotScope } from '../../actors/engine-snapshot.ts';
import type { ClusterNode } from '../../src/open-engine.ts';
import { snapshotPartitions } from '../../src/partition-snapshots.ts';
import { LIMITS } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';

const CONFIG = { snapshotLogBytesMax: 1_000, snapshotIntervalMs: 60_000, clusterPartitions: 4 };

interface Fake {
  bytesSinceSnapshot: number;
  lastSnapshotAtMs: number;
  writing: boolean;
}

function setUp(partitions: Record<string, Fake>) {
  const committed: EngineRecord[] = [];
  const written: { key: string; scope: unknown }[] = [];
  let lastScope: SnapshotScope | undefined;
  const engine = new Engine({
    clock: new ManualClock(T0),
    limits: LIMITS,
    log: {
      append: async (record) => {
        committed.push(record as EngineRecord);
        partitions.accounts!.bytesSinceSnapshot += 10; // the keep-alive's bytes, as the store counts them
        return committed.length;
      },
    },
  });
  const takeSnapshot = engine.takeSnapshot.bind(engine);
  engine.takeSnapshot = (scope) => {
    lastScope = scope;
    return takeSnapshot(scope);
  };
  const cluster = {
    store: {
      writing: () => Object.entries(partitions).filter(([, fake]) => fake.writing).map(([key]) => key),
      partition: (key: string) => partitions[key]!,
      writePartitionSnapshot: async (key: string) => {
        written.push({ key, scope: lastScope });
        partitions[key]!.bytesSinceSnapshot = 0;
        return { seq: 1, bytes: 1, durationMs: 1 };
      },
    },
  } as unknown as ClusterNode;
  const run = (all = false) => snapshotPartitions(cluster, engine, CONFIG, { log: () => undefined, observer: { snapshotWritten: () => undefined }, all });
  return { committed, written, run };
}

const now = () => performance.now();

test('only the partitions this node writes and that are due, each with its own scope', async () => {
  const { written, committed, run } = setUp({
    'p.0': { bytesSinceSnapshot: 5_000, lastSnapshotAtMs: now(), writing: true }, // past SNAPSHOT_LOG_MB
    'p.1': { bytesSinceSnapshot: 10, lastSnapshotAtMs: now() - 120_000, writing: true }, // interval passed
    'p.2': { bytesSinceSnapshot: 10, lastSnapshotAtMs: now(), writing: true }, // neither
    'p.3': { bytesSinceSnapshot: 5_000, lastSnapshotAtMs: now() - 120_000, writing: false }, // another node's
    accounts: { bytesSinceSnapshot: 0, lastSnapshotAtMs: now(), writing: true }, // quiet, interval not passed
  });
  await run();
  expect(written).toEqual([
    { key: 'p.0', scope: { accounts: false, connections: { partition: 0, partitions: 4 } } },
    { key: 'p.1', scope: { accounts: false, connections: { partition: 1, partitions: 4 } } },
  ]);
  expect(committed).toEqual([]);
  // a clean stop: everything written with something to cover
  await run(true);
  expect(written.map((entry) => entry.key)).toEqual(['p.0', 'p.1', 'p.2']);
});

test('a quiet accounts partition gets a keep-alive record once the interval passed, and a snapshot covering it', async () => {
  const { written, committed, run } = setUp({ accounts: { bytesSinceSnapshot: 0, lastSnapshotAtMs: now() - 120_000, writing: true } });
  await run();
  expect(committed).toEqual([{ t: 'log.keepalive', atMs: expect.any(Number) }]);
  expect(written).toEqual([{ key: 'accounts', scope: { accounts: true, connections: 'none' } }]);
});
