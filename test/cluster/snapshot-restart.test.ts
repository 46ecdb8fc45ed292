/**
 * Restart from the object-store snapshot plus the stream's tail: a clean stop uploads a
 * snapshot (purging waits until a snapshot is 2 leases old: replica-purge.test.ts);
 * a restart loads it and replays only the records after it; a kill -9 and a restart
 * rebuild exactly the state the node served before the kill.
 */
import { afterAll, expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  cleanUpServices,
  createConnection,
  getJson,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  startService,
} from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { missingJobs, nodeEnv, startWriters } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

test('a restart loads the snapshot object and replays only the tail after it; the state is the one served before kill -9', async () => {
  nats = await startNatsCluster();
  const dataDir = makeDataDir('cluster-snapshot');
  dirs.push(dataDir);
  const env = nodeEnv(nats.url, 'node-a');

  const first = await startService({ dataDir, env });
  const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(first.baseUrl, cookie, 'snapshotted');
  for (let batch = 0; batch < 5; batch++) {
    expect((await ingest(first.baseUrl, connection.apiKey, batchOfJobs(connection.id, `before-${batch}`, 50))).status).toBe(200);
  }
  expect(await first.stop()).toBe(0); // a clean stop snapshots and releases the lease
  expect(first.output).toMatch(/snapshot at seq \d+/);
  // the only snapshot is younger than 2 leases: nothing is purged yet (replicas may still be reading below it)
  expect(first.output).not.toMatch(/purged \d+ messages/);
  expect(first.output).toMatch(/released the lease p\.0/);

  const second = await startService({ dataDir, env });
  expect(second.output).toMatch(/acquired the lease p\.0 \(epoch 2\) released by node-a/);
  expect(second.output).toMatch(/loaded snapshot p\.0 covering seq \d+/);
  expect(second.output).toMatch(/and 0 log records of jobwatch\.log\.p\.0/);
  for (let batch = 0; batch < 3; batch++) {
    expect((await ingest(second.baseUrl, connection.apiKey, batchOfJobs(connection.id, `after-${batch}`, 50))).status).toBe(200);
  }
  const before = await listAllJobs(second.baseUrl, cookie, 100);
  const usageBefore = (await getJson(second.baseUrl, '/api/connections', cookie)).body;
  expect(before).toHaveLength(400);
  await second.kill();

  const third = await startService({ dataDir, env });
  // the killed owner never released its lease: the restart waits it out, then replays the tail only
  expect(third.output).toMatch(/took over the lease p\.0 \(epoch 3\) from node-a/);
  expect(third.output).toMatch(/loaded snapshot p\.0 covering seq \d+/);
  const replayed = Number(third.output.match(/and (\d+) log records of jobwatch\.log\.p\.0/)?.[1]);
  expect(replayed).toBeGreaterThanOrEqual(3); // the three batches after the snapshot (and nothing before it)
  expect(replayed).toBeLessThan(20);
  expect(await listAllJobs(third.baseUrl, cookie, 100)).toEqual(before);
  expect((await getJson(third.baseUrl, '/api/connections', cookie)).body).toEqual(usageBefore);

}, 60_000);

test('a snapshot taken under concurrent ingest covers exactly what it captured: the restart neither loses nor repeats a record', async () => {
  nats ??= await startNatsCluster();
  const dataDir = makeDataDir('cluster-snapshot-busy');
  dirs.push(dataDir);
  const env = nodeEnv(nats.url, 'node-busy', { SNAPSHOT_LOG_MB: '1' });
  const node = await startService({ dataDir, env });
  const cookie = await login(node.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(node.baseUrl, cookie, 'busy');
  const writers = startWriters({ writers: 4, batchSize: 50, apiKey: connection.apiKey, connectionId: connection.id, target: () => node.baseUrl });
  await node.waitFor(/snapshot at seq \d+/, 40_000); // the log passed 1 MB; the writers keep going through it
  await Bun.sleep(500);
  await writers.stop();
  const before = await listAllJobs(node.baseUrl, cookie, 100);
  await node.kill();

  const restarted = await startService({ dataDir, env });
  const covered = Number(node.output.match(/snapshot at seq (\d+)/)?.[1]);
  expect(restarted.output).toContain(`loaded snapshot p.0 covering seq ${covered}`);
  expect(Number(restarted.output.match(/and (\d+) log records of jobwatch\.log\.p\.0/)?.[1])).toBeGreaterThan(0);
  expect(await listAllJobs(restarted.baseUrl, cookie, 100)).toEqual(before);
  expect(await missingJobs(restarted.baseUrl, cookie, writers.acknowledged)).toEqual([]);
}, 60_000);
