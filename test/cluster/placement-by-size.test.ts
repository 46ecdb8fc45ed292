/**
 * Placement by size on a real 3-server NATS cluster with 3 real nodes (docs/cluster.md,
 * "Placement by size"), with the standbys the suite runs with (0 or 1): two partitions kept
 * by one node in the counted placement are made heavy, so that node keeps well over the
 * mean; with a 1 s rebalance interval the coordinator moves slots until no move can lower
 * the heaviest node, while a writer keeps sending to a heavy connection through the node
 * that loses it. Then: each partition kept by exactly its writer and standbys, no move left
 * (the kept jobs per node as the pure balancer judges them), nothing acknowledged lost
 * (every job readable through every node), and the moves logged with the weights. Then
 * kill -9 of a node under the map: its leases go to their heirs in the map (with standbys,
 * nodes that keep the partitions already: no take-up before writing), nothing lost.
 */
import { afterEach, expect, test } from 'bun:test';
import { partitionOf } from '../../actors/partition-of.ts';
import type { Standbys } from '../../cluster/partition-keepers.ts';
import { Placement } from '../../cluster/placement.ts';
import { balanceStep, keptWeights } from '../../cluster/size-balance.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, cleanUpServices, createConnection, ingest, login, makeDataDir, startService, type Connection, type ServiceProcess } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { health, missingJobs, nodeEnv, partitionKeys, testStandbys, waitForAssignment } from './cluster-harness.ts';

const PARTITIONS = 8;
const NODES = ['node-a', 'node-b', 'node-c'];
const HEAVY_JOBS = 150;
const LIGHT_JOBS = 10;
const CONNECTIONS = 12;
const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterEach(async () => {
  await nats?.stop();
  nats = undefined;
});

const standbys: Standbys = ((): Standbys => {
  const value = testStandbys().CLUSTER_STANDBYS;
  return value === undefined ? 1 : value === 'all' ? 'all' : Number(value);
})();

/** Who keeps what, from every node's health: the writer first, then the other keepers. */
async function keepersSeen(processes: ServiceProcess[]): Promise<Map<string, string[]>> {
  const answers = await Promise.all(processes.map((process) => health(process.baseUrl)));
  const rankings = new Map(partitionKeys(PARTITIONS).map((key) => [key, [] as string[]]));
  for (const [index, { body }] of answers.entries()) {
    for (const key of body.keeps ?? []) {
      const keepers = rankings.get(key)!;
      if ((body.writes ?? []).includes(key)) keepers.unshift(NODES[index]!);
      else keepers.push(NODES[index]!);
    }
  }
  return rankings;
}

/** One job every 100 ms to `connection` through `url`, each retried until acknowledged (as an SDK does on 503). */
function throttledWriter(connection: Connection, url: string) {
  const acknowledged = new Set<string>();
  let stopping = false;
  const loop = (async () => {
    for (let n = 0; !stopping; n++) {
      const events = batchOfJobs(connection.id, `during-${n}`, 1);
      for (;;) {
        const result = await ingest(url, connection.apiKey, events).catch(() => null);
        if (result?.status === 200) break;
        if (result !== null && result.status !== 503) throw new Error(`ingest answered ${result.status} ${JSON.stringify(result.body)}`);
        await Bun.sleep(100);
      }
      acknowledged.add(events[0]!.job.externalId);
      await Bun.sleep(100);
    }
  })();
  return {
    acknowledged,
    stop: async () => {
      stopping = true;
      await loop;
    },
  };
}

test(`the coordinator moves slots until no move lowers the node keeping the most jobs; nothing acknowledged is lost (CLUSTER_STANDBYS=${standbys})`, async () => {
  if (standbys === 'all') return; // every node keeps everything: nothing to move
  const slots = Math.min(NODES.length, 1 + standbys);
  nats = await startNatsCluster();
  const processes = await Promise.all(
    NODES.map((name) => {
      const dataDir = makeDataDir(`by-size-${name}`);
      dirs.push(dataDir);
      return startService({ dataDir, env: nodeEnv(nats!.url, name, { CLUSTER_PARTITIONS: String(PARTITIONS), CLUSTER_REBALANCE_SECONDS: '1' }) });
    }),
  );
  const urls = processes.map((process) => process.baseUrl);
  await waitForAssignment(urls, { partitions: PARTITIONS, spread: true });
  const cookie = await login(urls[0]!, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connections: Connection[] = [];
  for (let n = 0; n < CONNECTIONS; n++) connections.push(await createConnection(urls[n % 3]!, cookie, `by-size-${n}`));
  const keyOf = (connection: Connection) => `p.${partitionOf(connection.id, PARTITIONS)}`;

  // two occupied partitions that one node keeps in the counted placement: made heavy, they put it far over the mean
  const counted = new Placement(partitionKeys(PARTITIONS), standbys);
  const occupied = [...new Set(connections.map(keyOf))];
  const keptBy = (node: string) => occupied.filter((key) => counted.ranked(NODES, key).slice(0, slots).includes(node));
  const loaded = NODES.find((node) => keptBy(node).length >= 2)!;
  const heavyKeys = keptBy(loaded).slice(0, 2);
  const heavy = heavyKeys.map((key) => connections.find((connection) => keyOf(connection) === key)!);
  const jobsOf = new Map(connections.map((connection) => [connection.id, heavy.includes(connection) ? HEAVY_JOBS : LIGHT_JOBS]));
  const acknowledged = new Set<string>();
  for (const connection of connections) {
    const events = batchOfJobs(connection.id, `seed-${connection.id}`, jobsOf.get(connection.id)!);
    expect((await ingest(urls[0]!, connection.apiKey, events)).status).toBe(200);
    for (const event of events) acknowledged.add(event.job.externalId);
  }

  // writes go on through the moves: one heavy connection, through the node that keeps it now (a few a second,
  // so that the weights stay what the test set up)
  const writer = throttledWriter(heavy[1]!, urls[NODES.indexOf(loaded)]!);
  const weightsNow = () => {
    const weights = new Map(partitionKeys(PARTITIONS).filter((key) => key !== 'accounts').map((key) => [key, 0]));
    for (const connection of connections) weights.set(keyOf(connection), weights.get(keyOf(connection))! + jobsOf.get(connection.id)!);
    weights.set(keyOf(heavy[1]!), weights.get(keyOf(heavy[1]!))! + writer.acknowledged.size);
    return weights;
  };
  const dataKeys = partitionKeys(PARTITIONS).filter((key) => key !== 'accounts');
  const countedKept = keptWeights(counted.rankingsOf(NODES), dataKeys, weightsNow(), slots);
  expect(balanceStep(counted.rankingsOf(NODES), dataKeys, weightsNow(), slots)).not.toBeNull();

  // the first move: a partition kept elsewhere than the counted placement says (each move waits for the
  // one before to finish: a take-up, a handover, a let-go a lease later; a loaded CI machine is slow at each)
  const deadline = Date.now() + 120_000;
  const slotsOf = (rankings: ReadonlyMap<string, readonly string[]>) => JSON.stringify(dataKeys.map((key) => [...rankings.get(key)!.slice(0, slots)].sort()));
  let seen = await keepersSeen(processes);
  while (Date.now() < deadline && slotsOf(seen) === slotsOf(counted.rankingsOf(NODES))) {
    await Bun.sleep(200);
    seen = await keepersSeen(processes);
  }
  await writer.stop();
  for (const id of writer.acknowledged) acknowledged.add(id);
  expect(writer.acknowledged.size).toBeGreaterThan(0);

  // settled: every partition kept by exactly its writer and standbys, and no move left that lowers the heaviest
  let last = '';
  for (;;) {
    seen = await keepersSeen(processes);
    const exact = [...seen].every(([key, keepers]) => key === 'accounts' || keepers.length === slots);
    const caughtUp = exact && balanceStep(seen, dataKeys, weightsNow(), slots) === null;
    if (caughtUp) {
      // and it stays so for a few intervals (the coordinator has nothing more to do)
      await Bun.sleep(3_000);
      const again = await keepersSeen(processes);
      if (JSON.stringify([...again]) === JSON.stringify([...seen])) break;
    }
    last = JSON.stringify([...seen]);
    if (Date.now() > deadline) throw new Error(`placement by size did not settle within 120 s; last seen ${last}; weights ${JSON.stringify([...weightsNow()])}`);
    await Bun.sleep(250);
  }
  const settledKept = keptWeights(seen, dataKeys, weightsNow(), slots);
  expect(Math.max(...settledKept.values())).toBeLessThan(Math.max(...countedKept.values()));

  // nothing acknowledged lost: every job readable through every node
  for (const url of urls) expect(await missingJobs(url, cookie, acknowledged)).toEqual([]);
  // the moves were logged with the weights, by the coordinator (the smallest id)
  expect(processes[0]!.output).toMatch(/placement by size: (moved|swapped) p\.\d+ \(\d+ jobs, (writer|standby 1)\) from node-\w to node-\w.*; kept jobs per node node-a \d+/);
  for (const process of processes) expect(process.output).toMatch(/placement map revision \d+ in force/);

  // failover under the map: kill -9 of node-c (not the coordinator); each of its leases goes to its heir
  // in the map, which with standbys keeps the partition already (no take-up on the lease)
  const victim = processes[2]!;
  const survivors = processes.slice(0, 2);
  const outputBefore = survivors.map((process) => process.output.length);
  await victim.kill();
  await waitForAssignment(survivors.map((process) => process.baseUrl), { partitions: PARTITIONS, timeoutMs: 30_000 });
  const afterKill = survivors.map((process, index) => process.output.slice(outputBefore[index]!)).join('\n');
  if ([...seen].some(([key, keepers]) => key !== 'accounts' && keepers[0] === 'node-c')) {
    expect(afterKill).toMatch(/is the heir of node-c, gone/);
  }
  if (standbys !== 0) expect(afterKill).not.toMatch(/taking up p\.\d+: this node takes its lease/);
  for (const process of survivors) expect(await missingJobs(process.baseUrl, cookie, acknowledged)).toEqual([]);
  console.log(processes[0]!.output.split('\n').filter((line) => line.includes('placement by size:')).join('\n'));
}, 240_000);
