/**
 * The cluster's layout is fixed at its first start: the partition count is stored in the
 * jobwatch_meta bucket, a node configured with another count refuses to start, and a
 * stream written by the one-partition layout of an earlier release (messages, no stored
 * count) is refused with the way out, not read as if it were partitioned.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Kvm } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ClusterLayoutError, LOG_STREAM, LOG_SUBJECTS, META_BUCKET, connectNatsCluster } from '../../cluster/nats-cluster.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';

let nats: NatsTestCluster;
let nc: NatsConnection;
beforeAll(async () => {
  nats = await startNatsCluster();
  nc = await connect({ servers: nats.url.split(',') });
}, 60_000);
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

const open = (partitions: number) => connectNatsCluster(nats.url.split(','), 'layout-test', { replicas: 3, partitions, maxAgeMs: 3 * 86_400_000 }, () => undefined);

test('the first start stores the partition count and sets the stream up; another count is refused; a one-partition log is refused', async () => {
  const first = await open(16);
  const info = await first.jsm.streams.info(LOG_STREAM);
  expect(info.config.subjects).toEqual([LOG_SUBJECTS]);
  expect(info.config.max_age).toBe(3 * 86_400_000 * 1_000_000);
  await first.close();
  expect((await (await new Kvm(jetstream(nc)).open(META_BUCKET)).get('partitions'))?.string()).toBe('16');

  expect(await open(16).then((cluster) => cluster.close())).toBeUndefined(); // the same count starts
  const refused = await open(8).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(ClusterLayoutError);
  expect(String(refused)).toMatch(/this cluster has 16 partitions .* but CLUSTER_PARTITIONS is 8/);

  // an earlier release's log: messages in the stream, no stored count
  await (await new Kvm(jetstream(nc)).open(META_BUCKET)).purge('partitions');
  await jetstream(nc).publish('jobwatch.log.p.0', new Uint8Array([0x90]));
  const old = await open(16).catch((error: unknown) => error);
  expect(old).toBeInstanceOf(ClusterLayoutError);
  expect(String(old)).toMatch(/holds 1 messages but jobwatch_meta names no partition count.*Start from an empty NATS store/);
}, 60_000);
