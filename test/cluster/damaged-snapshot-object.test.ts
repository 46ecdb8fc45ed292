/**
 * Cluster mode reads snapshots from the object store: the same shape checks apply. The
 * accounts partition's snapshot object rewritten with its accounts chunk as `{}` under a
 * valid checksum (and its covered sequence kept) stops the node's start naming the object,
 * the chunk and its offset, instead of coming up with every account gone and a new admin.
 */
import { afterAll, expect, test } from 'bun:test';
import { jetstream } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { SNAPSHOTS_BUCKET } from '../../cluster/nats-cluster.ts';
import { SNAPSHOT_MAGIC, encodeFrame, readFrame } from '../../persistence/frame.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';
import { cleanUpServices, createConnection, login, makeDataDir, spawnService, startService, ADMIN_EMAIL, ADMIN_PASSWORD } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { nodeEnv, waitForAssignment } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

test('an accounts snapshot object whose accounts chunk is {} stops the start, naming the object and the chunk', async () => {
  nats = await startNatsCluster();
  const dataDir = makeDataDir('cluster-damaged');
  dirs.push(dataDir);
  const env = nodeEnv(nats.url, 'node-1', { CLUSTER_PARTITIONS: '2' });
  const node = await startService({ dataDir, env });
  await waitForAssignment([node.baseUrl], { partitions: 2 });
  const cookie = await login(node.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  await createConnection(node.baseUrl, cookie, 'prod');
  expect(await node.stop()).toBe(0); // a clean stop snapshots every partition it writes

  const nc = await connect({ servers: nats.url.split(',') });
  try {
    const objects = await new Objm(jetstream(nc)).open(SNAPSHOTS_BUCKET);
    const info = (await objects.info('accounts'))!;
    const original = (await objects.getBlob('accounts'))!;
    const frames: Array<{ start: number; end: number; value: unknown }> = [];
    for (let offset = 0; offset < original.length; ) {
      const outcome = readFrame(original, offset, SNAPSHOT_MAGIC);
      if (outcome.kind !== 'ok') throw new Error(`the snapshot object is not clean at ${offset}`);
      frames.push({ start: offset, end: outcome.nextOffset, value: decodeValue(outcome.payload) });
      offset = outcome.nextOffset;
    }
    const index = frames.findIndex((frame) => (frame.value as { k?: string }).k === 'accounts');
    expect(index).toBeGreaterThan(0);
    const accounts = frames[index]!;
    const damaged = Buffer.concat([original.subarray(0, accounts.start), encodeFrame(SNAPSHOT_MAGIC, index, encodeValue({})), original.subarray(accounts.end)]);
    await objects.putBlob({ name: 'accounts', metadata: info.metadata }, damaged);

    const refused = spawnService({ dataDir, env: { ...env, ADMIN_EMAIL: undefined, ADMIN_PASSWORD: undefined } });
    expect(await refused.waitForExit(60_000)).not.toBe(0);
    expect(refused.output).toContain(
      `refusing to start: snapshot object accounts chunk ${index} of ${frames.length - 2} (frame at offset ${accounts.start}): expected a snapshot chunk kind this version knows`,
    );
    expect(refused.output).not.toContain('created admin');
  } finally {
    await nc.close();
  }
}, 120_000);
