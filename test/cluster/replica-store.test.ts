/**
 * The store's replica side against a real 3-server NATS cluster, without processes: a
 * replica applies every record the owner commits, in order, and `waitApplied` tells when;
 * it refuses to append (synchronously, before anything could be evolved); and a takeover
 * while the old owner keeps appending loses nothing the old owner had acknowledged: the
 * new owner's marker fences the old one, and whatever the old one stored before it
 * (during the catch-up, the marker's retry) is applied by the new owner first.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { jetstream, jetstreamManager, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../../actors/domain-error.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { ClusterStore } from '../../cluster/cluster-store.ts';
import { SnapshotObjects } from '../../cluster/snapshot-object.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';

const STREAM = 'REPLICA_STORE_TEST';
let nats: NatsTestCluster;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let snapshots: SnapshotObjects;
let staging: string;

beforeAll(async () => {
  nats = await startNatsCluster();
  nc = await connect({ servers: nats.url.split(',') });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  staging = mkdtempSync(join(tmpdir(), 'jobwatch-replica-store-'));
  snapshots = new SnapshotObjects(await new Objm(js).create('replica_store_test', { replicas: 3 }), staging);
}, 60_000);
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
  if (staging) rmSync(staging, { recursive: true, force: true });
});

let subjects = 0;
/** Stores of one partition (and the accounts partition, where these records go) on a stream of their own, as a cluster has. */
async function storesOn(prefix: string) {
  const stream = `${STREAM}_${subjects}`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], num_replicas: 3, storage: StorageType.File });
  return (node: string, lines: string[] = []) =>
    new ClusterStore({
      js,
      jsm,
      stream,
      subjectPrefix: prefix,
      partitions: 1,
      snapshots,
      node: `${prefix}/${node}`,
      maxPayloadBytes: 8 * 1024 * 1024,
      leaseMs: 2_000,
      log: (line) => lines.push(line),
    });
}

/** A store recovered as a replica, its applied records collected; `follow` as every node does. */
async function replicaOf(store: ClusterStore, applied: unknown[], fatal: Error[] = []) {
  await store.recover({ snapshotChunk: () => undefined, record: (record) => applied.push(record) });
  return store.follow((record) => applied.push(record), (error) => fatal.push(error));
}

test('a replica applies every record the owner commits, in order, says when it has, and refuses to append', async () => {
  const store = await storesOn(`replica.follow${subjects++}`);
  const owner = store('owner');
  await replicaOf(owner, []);
  await owner.takeOver('accounts', 1);
  await owner.append({ n: 0 });

  const applied: unknown[] = [];
  const replica = store('replica');
  const follower = await replicaOf(replica, applied);
  expect(applied).toEqual([{ n: 0 }]);
  expect(() => replica.append({ n: 'refused' })).toThrow(DomainError);
  expect(() => replica.append({ n: 'refused' })).toThrow(/does not write partition accounts/);

  const seqs = await Promise.all(Array.from({ length: 50 }, (_, n) => owner.append({ n: n + 1 })));
  expect(await follower.waitApplied(Math.max(...seqs), 10_000)).toBe(true);
  expect(applied).toEqual(Array.from({ length: 51 }, (_, n) => ({ n })));
  expect(follower.appliedSeq).toBe(owner.lastSeq);
  // nothing more is coming: a bounded wait says no, in time
  expect(await follower.waitApplied(owner.lastSeq + 1, 200)).toBe(false);
  await replica.close();
  await owner.close();
}, 30_000);

test('a takeover while the old owner keeps appending: the old owner is fenced, and every record it had acknowledged is applied by the new one', async () => {
  const store = await storesOn(`replica.takeover${subjects++}`);
  const old = store('old');
  await replicaOf(old, []);
  await old.takeOver('accounts', 1);

  const applied: unknown[] = [];
  const lines: string[] = [];
  const successor = store('successor', lines);
  await replicaOf(successor, applied);

  // the old owner writes on (a paused owner that resumed) until it is refused
  const acknowledged: number[] = [];
  let refused: unknown;
  const writing = (async () => {
    for (let n = 0; refused === undefined; n++) {
      await Promise.all([old.append({ n: 2 * n }), old.append({ n: 2 * n + 1 })]).then(
        () => acknowledged.push(2 * n, 2 * n + 1),
        (error: unknown) => {
          refused = error;
        },
      );
    }
  })();
  while (acknowledged.length < 40) await Bun.sleep(5);
  await successor.takeOver('accounts', 2);
  await writing;

  expect(String(refused)).toMatch(/fenced/);
  const raced = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;
  console.log(
    `takeover under a writing old owner: ${acknowledged.length} records acknowledged by it; marker refused ${raced(/before the owner marker/)}x, ` +
      `a message admitted beside the marker ${raced(/past the owner marker/)}x, on a fence already passed ${raced(/admitted fenced on seq/)}x`,
  );
  const appliedNs = new Set(applied.map((record) => (record as { n: number }).n));
  expect(acknowledged.filter((n) => !appliedNs.has(n))).toEqual([]);
  expect(lines.some((line) => /^caught up \d+ log records of replica\.takeover\d+\.accounts \(seq \d+ to \d+\)/.test(line))).toBe(true);
  // the new owner writes after everything the old one stored
  const seq = await successor.append({ n: 'successor' });
  expect(seq).toBe(successor.lastSeq);
  await successor.close();
}, 30_000);

test('several partitions: each record goes to its partition writer, a node refuses (synchronously) the partitions it does not write, and a handover moves one while the other keeps its writer', async () => {
  const PARTITIONS = 4;
  const prefix = `replica.partitions${subjects++}`;
  const stream = `${STREAM}_${subjects}`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], num_replicas: 3, storage: StorageType.File });
  const storeOf = (node: string) =>
    new ClusterStore({ js, jsm, stream, subjectPrefix: prefix, partitions: PARTITIONS, snapshots, node: `${prefix}/${node}`, maxPayloadBytes: 8 * 1024 * 1024, leaseMs: 2_000, log: () => undefined });
  // a connection id in each partition
  const connectionIn = Array.from({ length: PARTITIONS }, (_, partition) => {
    for (let n = 0; ; n++) if (partitionOf(`c${n}`, PARTITIONS) === partition) return `c${n}`;
  });
  const record = (partition: number, n: number) => ({ t: 'ingest', connectionId: connectionIn[partition], n });
  const appliedOn = { a: [] as unknown[], b: [] as unknown[] };
  const a = storeOf('a');
  const b = storeOf('b');
  const followerA = await replicaOf(a, appliedOn.a);
  const followerB = await replicaOf(b, appliedOn.b);
  await Promise.all([a.takeOver('p.0', 1), a.takeOver('p.1', 1), a.takeOver('accounts', 1), b.takeOver('p.2', 1), b.takeOver('p.3', 1)]);
  expect(a.writing()).toEqual(['p.0', 'p.1', 'accounts']);
  expect(b.writing()).toEqual(['p.2', 'p.3']);
  expect(b.keyOf({ t: 'retention', atMs: 0, partition: 3, partitions: PARTITIONS })).toBe('p.3');
  expect(b.keyOf({ t: 'connection.created', connection: { id: connectionIn[2] } })).toBe('accounts');
  // refused before anything could be evolved: a throw, not a rejected promise
  expect(() => a.append(record(2, -1))).toThrow(/does not write partition p\.2/);
  expect(() => b.append({ t: 'user.created' })).toThrow(/does not write partition accounts/);

  const written = await Promise.all([a.append(record(0, 0)), a.append(record(1, 1)), b.append(record(2, 2)), b.append(record(3, 3))]);
  expect(await followerA.waitApplied(Math.max(...written), 10_000)).toBe(true);
  expect(await followerB.waitApplied(Math.max(...written), 10_000)).toBe(true);
  // each node applied what the other wrote, and skipped its own
  expect(appliedOn.a).toEqual([record(2, 2), record(3, 3)]);
  expect(appliedOn.b).toEqual([record(0, 0), record(1, 1)]);

  // p.1 moves from a to b while a keeps writing p.0
  const inFlight = a.append(record(1, 4));
  const releasing = a.release('p.1');
  expect(() => a.append(record(1, 5))).toThrow(/does not write partition p\.1/);
  await releasing;
  const seqInFlight = await inFlight;
  await b.takeOver('p.1', 2);
  expect(appliedOn.b).toContainEqual(record(1, 4)); // caught up to the marker
  const after = await Promise.all([a.append(record(0, 6)), b.append(record(1, 7))]);
  expect(seqInFlight).toBeLessThan(Math.min(...after));
  expect(await followerA.waitApplied(Math.max(...after), 10_000)).toBe(true);
  expect(appliedOn.a.at(-1)).toEqual(record(1, 7));
  expect(a.writing()).toEqual(['p.0', 'accounts']);
  expect(b.writing()).toEqual(['p.1', 'p.2', 'p.3']);

  // a third node recovers every partition in stream order
  const recovered: unknown[] = [];
  await storeOf('c').recover({ snapshotChunk: () => undefined, record: (record) => recovered.push(record) });
  expect(new Set(recovered.map((entry) => (entry as { n: number }).n))).toEqual(new Set([0, 1, 2, 3, 4, 6, 7]));
  await a.close();
  await b.close();
}, 30_000);

test('taking a partition up while its writer keeps writing: its snapshot, then its subject, then the messages held back meanwhile, each record once and in order; letting it go: its records skipped, the position still advancing, what it had applied (or written, on the writer) counted as work once more', async () => {
  const PARTITIONS = 2;
  const prefix = `replica.takeup${subjects++}`;
  const stream = `${STREAM}_${subjects}`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], num_replicas: 3, storage: StorageType.File });
  const storeOf = (node: string, lines: string[] = []) =>
    new ClusterStore({ js, jsm, stream, subjectPrefix: prefix, partitions: PARTITIONS, snapshots, node: `${prefix}/${node}`, maxPayloadBytes: 8 * 1024 * 1024, leaseMs: 2_000, log: (line) => lines.push(line) });
  const connectionIn0 = Array.from({ length: 50 }, (_, n) => `c${n}`).find((id) => partitionOf(id, PARTITIONS) === 0)!;
  const record = (n: number) => ({ t: 'ingest', connectionId: connectionIn0, n });
  const writer = storeOf('writer');
  await replicaOf(writer, []);
  await Promise.all([writer.takeOver('p.0', 1), writer.takeOver('accounts', 1)]);
  for (let n = 0; n < 30; n++) await writer.append(record(n));
  await writer.writePartitionSnapshot('p.0', { chunks: [{ upTo: 29 }][Symbol.iterator]() });

  // a node that keeps only the accounts: recovers and follows without p.0's records
  const lines: string[] = [];
  const keeper = storeOf('keeper', lines);
  keeper.planKeeping(() => false);
  const applied: unknown[] = [];
  const follower = await replicaOf(keeper, applied);
  expect(keeper.keeping()).toEqual(['accounts']);
  expect(keeper.keepsConnection(connectionIn0)).toBe(false);
  expect(applied).toEqual([]);

  let writing = true;
  let next = 30;
  const acknowledged: number[] = [];
  const writes = (async () => {
    while (writing) {
      const n = next++;
      await writer.append(record(n));
      acknowledged.push(n);
    }
  })();
  while (acknowledged.length < 20) await Bun.sleep(5);
  const chunks: unknown[] = [];
  const takenUp: unknown[] = [];
  const taking = keeper.takeUp('p.0', { snapshotChunk: (chunk) => chunks.push(chunk), snapshotRestored: () => takenUp.push('restored'), record: (entry) => takenUp.push(entry) });
  expect(keeper.partition('p.0').keeping).toBe('taking up');
  expect(keeper.keepsConnection(connectionIn0)).toBe(true); // the engine holds its connections from here on
  const taken = await taking;
  expect(keeper.partition('p.0').keeping).toBe('kept');
  while (acknowledged.length < taken.records + 60) await Bun.sleep(5);
  writing = false;
  await writes;
  expect(await follower.waitApplied(writer.lastSeq, 10_000)).toBe(true);

  expect(chunks).toEqual([{ upTo: 29 }]);
  expect(takenUp[0]).toBe('restored');
  // the take-up's own records and the follower's afterwards: every record after the snapshot once, in order
  const after = [...takenUp.slice(1), ...applied];
  expect(after).toEqual(Array.from({ length: next - 30 }, (_, index) => record(30 + index)));
  expect(taken.records).toBeGreaterThan(0);
  expect(taken.heldBack).toBeGreaterThan(0);
  expect(taken.snapshotSeq).toBeGreaterThan(0);

  // letting go: p.0's next records are skipped, and the follower's position passes them; what it had
  // applied counts as work taken in once more (the idle collection gives the dropped state back)
  const workBefore = keeper.bytesApplied;
  const appliedToP0 = keeper.partition('p.0').reader.bytesApplied;
  expect(appliedToP0).toBeGreaterThan(0);
  keeper.letGo('p.0');
  expect(keeper.bytesApplied).toBe(workBefore + appliedToP0);
  expect(keeper.keeping()).toEqual(['accounts']);
  const appliedBefore = applied.length;
  const seq = await writer.append(record(-1));
  expect(await follower.waitApplied(seq, 10_000)).toBe(true);
  expect(applied.length).toBe(appliedBefore);
  expect(() => keeper.letGo('accounts')).toThrow(/kept by every node/);

  // the writer hands p.0 over and lets it go: what it had written (its reader applied none of
  // it) counts as work too, or a node that gave a partition it wrote away would never collect
  expect(writer.partition('p.0').reader.bytesApplied).toBe(0);
  await writer.release('p.0');
  const writerWorkBefore = writer.bytesApplied;
  writer.letGo('p.0');
  expect(writer.bytesApplied - writerWorkBefore).toBeGreaterThanOrEqual(appliedToP0);
  await keeper.close();
  await writer.close();
}, 30_000);
