/**
 * Hot standby: node A owns the partition, node B follows the log as a replica and waits
 * for the lease. A gets kill -9 while 4 writers ingest through it; B takes the lease once
 * it has seen it unrenewed for the lease time, catches up with the few records it had not
 * applied yet (no snapshot load, no replay), and serves. The writers move to B and retry
 * what A never answered; every event acknowledged by either node is read back through B.
 * The failover time (kill to B the owner) is printed.
 */
import { afterAll, expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  cleanUpServices,
  createConnection,
  login,
  makeDataDir,
  startService,
} from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { TEST_LEASE_MS, health, missingJobs, nodeEnv, startStandby, startWriters, waitForCount, waitForOwner } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

test('kill -9 of the owner mid-ingest: the standby takes over within the lease plus a catch-up (no replay) and holds every acknowledged event', async () => {
  nats = await startNatsCluster();
  const dirA = makeDataDir('cluster-owner');
  const dirB = makeDataDir('cluster-standby');
  dirs.push(dirA, dirB);
  const a = await startService({ dataDir: dirA, env: nodeEnv(nats.url, 'node-a') });
  const b = await startStandby({ dataDir: dirB, env: nodeEnv(nats.url, 'node-b') });
  await b.waitFor(/waiting for the lease held by node-a/);
  expect((await health(b.baseUrl)).body).toMatchObject({ status: 'ok', role: 'standby', node: 'node-b', owner: 'node-a' });

  const cookie = await login(a.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(a.baseUrl, cookie, 'failover');
  let target = a.baseUrl;
  const writers = startWriters({ writers: 4, batchSize: 20, apiKey: connection.apiKey, connectionId: connection.id, target: () => target });
  await waitForCount(writers, 600);

  const killedAtMs = performance.now();
  await a.kill();
  const ackedByA = writers.acknowledged.size;
  await waitForOwner([b.baseUrl], 30_000);
  const failoverMs = performance.now() - killedAtMs;
  target = b.baseUrl;
  await waitForCount(writers, ackedByA + 400);
  await writers.stop();

  const caughtUp = b.output.match(/caught up (\d+) log records of jobwatch\.log\.p\.0 \(seq \d+ to \d+\) in (\d+) ms/);
  console.log(
    `failover: ${Math.round(failoverMs)} ms from kill -9 of the owner to the standby the owner ` +
      `(lease ${TEST_LEASE_MS} ms, caught up ${caughtUp?.[1]} records in ${caughtUp?.[2]} ms); ` +
      `${ackedByA} events acknowledged by A, ${writers.acknowledged.size} in all, ${writers.retries} retried batches`,
  );
  expect(b.output).toMatch(/took over the lease p\.0 \(epoch 2\) from node-a/);
  // the takeover did not rebuild: no snapshot loaded and no replay after the lease was won
  const afterTakeover = b.output.slice(b.output.indexOf('took over the lease p.0'));
  expect(caughtUp).not.toBeNull();
  expect(afterTakeover).not.toMatch(/loaded snapshot|no snapshot p\.0|log records replayed|recovered from/);
  // B followed while A wrote: only what A wrote in its last moments was left to catch up
  expect(Number(caughtUp![1])).toBeLessThan(ackedByA / 20 / 2); // records are batches of 20 events
  expect(failoverMs).toBeLessThan(TEST_LEASE_MS + 10_000);
  // the session made on A works on B: sessions are records, and the session key is shared
  expect(await missingJobs(b.baseUrl, cookie, writers.acknowledged)).toEqual([]);
}, 60_000);
