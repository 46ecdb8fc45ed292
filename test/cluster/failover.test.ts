/**
 * Three nodes, 16 partitions and the accounts partition: every node writes some of them
 * (its health says which) and is a hot replica of all. Four writers, each for its own
 * connection, ingest through every node in turn (a node that does not write the
 * connection's partition forwards to the one that does). One node gets kill -9 mid-run:
 * its leases lapse and its partitions' heirs (their standbys) take them, each catching up
 * only what its replica had not applied; then the survivors settle on the placement over the
 * two of them, a survivor's partition moving only where that placement wants it elsewhere. Every acknowledged event is read
 * back through both survivors. The failover time (kill to every partition written again)
 * is printed.
 */
import { afterAll, expect, test } from 'bun:test';
import { partitionOf } from '../../actors/partition-of.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cleanUpServices, createConnection, login } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { Placement } from '../../cluster/placement.ts';
import { TEST_LEASE_MS, health, missingJobs, partitionKeys, startNodes, startWriters, waitForAssignment } from './cluster-harness.ts';

const PARTITIONS = 16;
const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

test('kill -9 of one of three nodes mid-ingest: its partitions are written by the survivors within the lease plus a catch-up, and every acknowledged event is held', async () => {
  nats = await startNatsCluster();
  const names = ['node-a', 'node-b', 'node-c'];
  const nodes = await startNodes(nats.url, names, dirs, {}, PARTITIONS);
  const urls = nodes.map((node) => node.baseUrl);
  const before = await waitForAssignment(urls, { partitions: PARTITIONS, spread: true });
  for (const [index, url] of urls.entries()) {
    const { body } = await health(url);
    expect(body).toMatchObject({ status: 'ok', role: 'node', node: `node-${'abc'[index]}` });
    expect(body.writes!.length).toBeGreaterThan(0);
  }

  const cookie = await login(urls[1]!, ADMIN_EMAIL, ADMIN_PASSWORD);
  // the victim writes the accounts partition or some other: whichever node writes p of the first connection
  const connections = [];
  for (let n = 0; n < 4; n++) connections.push(await createConnection(urls[n % 3]!, cookie, `failover-${n}`));
  const victim = before.get(`p.${partitionOf(connections[0]!.id, PARTITIONS)}`)!;
  const survivors = urls.filter((_, index) => index !== victim);
  let live = urls;
  let turn = 0;
  const runs = connections.map((connection) =>
    startWriters({ writers: 1, batchSize: 20, apiKey: connection.apiKey, connectionId: connection.id, target: () => live[turn++ % live.length]! }),
  );
  const acknowledged = () => runs.reduce((sum, run) => sum + run.acknowledged.size, 0);
  const until = async (count: number) => {
    const deadline = Date.now() + 40_000;
    while (acknowledged() < count) {
      if (Date.now() > deadline) throw new Error(`only ${acknowledged()} of ${count} events acknowledged`);
      await Bun.sleep(50);
    }
  };
  await until(800);

  const killedAtMs = performance.now();
  await nodes[victim]!.kill();
  live = survivors;
  const ackedBefore = acknowledged();
  const after = await waitForAssignment(survivors, { partitions: PARTITIONS, timeoutMs: 30_000 });
  const failoverMs = performance.now() - killedAtMs;
  await until(ackedBefore + 600);
  for (const run of runs) await run.stop();

  const moved = [...before].filter(([, index]) => index === victim).map(([key]) => key);
  const caughtUp = survivors.map((_, index) => nodes[index < victim ? index : index + 1]!.output.match(/caught up \d+ log records of jobwatch\.log\.\S+ \(seq \d+ to \d+\) in \d+ ms/g)?.length ?? 0);
  console.log(
    `failover of ${moved.length} partitions (${moved.join(', ')}): ${Math.round(failoverMs)} ms from kill -9 to every partition written by a survivor ` +
      `(lease ${TEST_LEASE_MS} ms); ${ackedBefore} events acknowledged before the kill, ${acknowledged()} in all, ` +
      `${runs.reduce((sum, run) => sum + run.retries, 0)} retried batches; takeovers logged by the survivors: ${caughtUp.join(', ')}`,
  );
  expect(moved.length).toBeGreaterThan(0);
  // a partition a survivor wrote that the placement over the survivors leaves with it never moved (writers do not depend on CLUSTER_STANDBYS)
  const placement = new Placement(partitionKeys(PARTITIONS), 0);
  const survivorNames = names.filter((_, index) => index !== victim);
  for (const [key, index] of before) if (index !== victim && placement.writer(survivorNames, key) === names[index]) expect(survivors[after.get(key)!]).toBe(urls[index]);
  // and the rest settle there by handover
  const wanted = new Map(partitionKeys(PARTITIONS).map((key) => [key, survivorNames.indexOf(placement.writer(survivorNames, key)!)]));
  await waitForAssignment(survivors, { partitions: PARTITIONS, matching: wanted, timeoutMs: 30_000 });
  expect(failoverMs).toBeLessThan(TEST_LEASE_MS + 10_000);
  const everything = new Set(runs.flatMap((run) => [...run.acknowledged]));
  for (const url of survivors) expect(await missingJobs(url, cookie, everything)).toEqual([]);
}, 90_000);
