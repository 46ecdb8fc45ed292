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
import { JetStreamStore } from '../../cluster/jetstream-store.ts';
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
  await jsm.streams.add({ name: STREAM, subjects: ['replica.>'], num_replicas: 3, storage: StorageType.File });
  staging = mkdtempSync(join(tmpdir(), 'jobwatch-replica-store-'));
  snapshots = new SnapshotObjects(await new Objm(js).create('replica_store_test', { replicas: 3 }), staging);
}, 60_000);
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
  if (staging) rmSync(staging, { recursive: true, force: true });
});

let subjects = 0;
function storesOn(subject: string) {
  return (node: string, lines: string[] = []) =>
    new JetStreamStore({
      js,
      jsm,
      stream: STREAM,
      subject,
      snapshotName: subject,
      snapshots,
      node: `${subject}/${node}`,
      maxPayloadBytes: 8 * 1024 * 1024,
      leaseMs: 2_000,
      log: (line) => lines.push(line),
    });
}

/** A store recovered as a replica, its applied records collected; `follow` as a standby does. */
async function replicaOf(store: JetStreamStore, applied: unknown[], fatal: Error[] = []) {
  await store.recover({ snapshotChunk: () => undefined, record: (record) => applied.push(record) });
  return store.follow((record) => applied.push(record), (error) => fatal.push(error));
}

test('a replica applies every record the owner commits, in order, says when it has, and refuses to append', async () => {
  const store = storesOn(`replica.follow.${subjects++}`);
  const owner = store('owner');
  await owner.recover({ snapshotChunk: () => undefined, record: () => undefined });
  await owner.takeOver(1, () => undefined);
  await owner.append({ n: 0 });

  const applied: unknown[] = [];
  const replica = store('replica');
  const follower = await replicaOf(replica, applied);
  expect(applied).toEqual([{ n: 0 }]);
  expect(() => replica.append({ n: 'refused' })).toThrow(DomainError);
  expect(() => replica.append({ n: 'refused' })).toThrow(/does not own the log/);

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
  const store = storesOn(`replica.takeover.${subjects++}`);
  const old = store('old');
  await old.recover({ snapshotChunk: () => undefined, record: () => undefined });
  await old.takeOver(1, () => undefined);

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
  await successor.takeOver(2, (record) => applied.push(record));
  await writing;

  expect(String(refused)).toMatch(/fenced/);
  const raced = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;
  console.log(
    `takeover under a writing old owner: ${acknowledged.length} records acknowledged by it; marker refused ${raced(/before the owner marker/)}x, ` +
      `a message admitted beside the marker ${raced(/past the owner marker/)}x, on a fence already passed ${raced(/admitted fenced on seq/)}x`,
  );
  const appliedNs = new Set(applied.map((record) => (record as { n: number }).n));
  expect(acknowledged.filter((n) => !appliedNs.has(n))).toEqual([]);
  expect(lines.some((line) => /^caught up \d+ log records of replica\.takeover\.\d+ \(seq \d+ to \d+\)/.test(line))).toBe(true);
  // the new owner writes after everything the old one stored
  const seq = await successor.append({ n: 'successor' });
  expect(seq).toBe(successor.lastSeq);
  await successor.close();
}, 30_000);
