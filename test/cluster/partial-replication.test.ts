/**
 * Partial replication (docs/cluster.md, "Partial replication: who keeps what") on a real
 * 3-server NATS cluster with real nodes: with CLUSTER_STANDBYS 0 and 1, each partition is
 * kept by its writer and that many standbys, and a node that does not keep a partition
 * holds none of its connections' jobs in memory (its /metrics against its health's `keeps`);
 * kill -9 of a writer loses nothing acknowledged (with standbys 0 the survivor takes the
 * partition up from the stream before it writes; with 1 the lease goes to the heir, the
 * standby, which writes without a take-up, and the third node takes the partition up); a node
 * joining takes up its share and the others let go of what they no longer keep.
 *
 * Reads here go to a node that keeps the connection read, so that they show what that node
 * holds (reads through other nodes are the cluster front's: test/cluster/cross-node-reads.test.ts).
 */
import { afterEach, expect, test } from 'bun:test';
import { partitionOf } from '../../actors/partition-of.ts';
import { keepersOf, type Standbys } from '../../cluster/partition-keepers.ts';
import { Placement } from '../../cluster/placement.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, cleanUpServices, createConnection, getJson, ingest, login, makeDataDir, startService, type Connection, type ServiceProcess } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';
import { health, nodeEnv, partitionKeys, startWriters, waitForAssignment } from './cluster-harness.ts';

const PARTITIONS = 8;
const METRICS_TOKEN = 'partial-replication-metrics-token';
const CONNECTIONS = 6;
const JOBS_EACH = 30;
const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterEach(async () => {
  await nats?.stop();
  nats = undefined;
});

interface Node {
  name: string;
  process: ServiceProcess;
}

async function startNode(name: string, standbys: Standbys): Promise<Node> {
  const dataDir = makeDataDir(`partial-${name}`);
  dirs.push(dataDir);
  const env = nodeEnv(nats!.url, name, { CLUSTER_PARTITIONS: String(PARTITIONS), CLUSTER_STANDBYS: String(standbys), METRICS_TOKEN });
  return { name, process: await startService({ dataDir, env }) };
}

async function retainedOn(baseUrl: string): Promise<{ jobs: number; connections: number; recordsApplied: number }> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const families = parsePrometheusText(await response.text());
  return {
    jobs: sampleValue(families, 'jobwatch_jobs_retained'),
    connections: sampleValue(families, 'jobwatch_connections'),
    recordsApplied: sampleValue(families, 'jobwatch_replica_records_applied_total'),
  };
}

/** The partitions the rule gives `node` among `live` once every lease is where it is wanted. */
function ruleFor(node: string, live: string[], standbys: Standbys): string[] {
  const placement = new Placement(partitionKeys(PARTITIONS), standbys);
  return partitionKeys(PARTITIONS).filter((key) => keepersOf(key, placement.ranked(live, key), standbys, null).includes(node));
}

/**
 * Waits until every node keeps what the rule says (its health), is current, and holds in
 * memory exactly the jobs and connections of the partitions it keeps (its /metrics).
 */
async function waitForKeeping(nodes: Node[], standbys: Standbys, jobsOf: Map<string, number>): Promise<Map<string, string[]>> {
  const live = nodes.map((node) => node.name);
  const deadline = Date.now() + 30_000;
  let last = '';
  for (;;) {
    const seen = await Promise.all(
      nodes.map(async (node) => {
        const { body } = await health(node.process.baseUrl);
        return { node: node.name, keeps: [...(body.keeps ?? [])].sort(), lag: body.replica?.lag ?? -1, retained: await retainedOn(node.process.baseUrl) };
      }),
    );
    const settled = seen.every(({ node, keeps, lag, retained }) => {
      const kept = [...jobsOf.keys()].filter((id) => keeps.includes(`p.${partitionOf(id, PARTITIONS)}`));
      const jobs = kept.reduce((sum, id) => sum + jobsOf.get(id)!, 0);
      return JSON.stringify(keeps) === JSON.stringify(ruleFor(node, live, standbys).sort()) && lag === 0 && retained.jobs === jobs && retained.connections === kept.length;
    });
    if (settled) return new Map(seen.map(({ node, keeps }) => [node, keeps]));
    last = JSON.stringify(seen);
    if (Date.now() > deadline) throw new Error(`the nodes did not settle on what they keep within 30 s; last seen ${last}`);
    await Bun.sleep(100);
  }
}

/** Every job of one connection, walked page by page through `baseUrl` (a node keeping it). */
async function externalIdsOf(baseUrl: string, cookie: string, connectionId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const { status, body } = await getJson(baseUrl, `/api/jobs?connectionId=${connectionId}&limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, cookie);
    if (status !== 200) throw new Error(`GET /api/jobs -> ${status} ${JSON.stringify(body)}`);
    for (const job of body.data as Array<{ externalId: string }>) ids.add(job.externalId);
    cursor = body.pagination.nextCursor;
  } while (cursor !== null);
  return ids;
}

/** Three nodes, six connections of 30 jobs each; returns them and what each connection holds. */
async function populatedCluster(standbys: Standbys) {
  nats = await startNatsCluster();
  const nodes = await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startNode(name, standbys)));
  const urls = nodes.map((node) => node.process.baseUrl);
  await waitForAssignment(urls, { partitions: PARTITIONS, spread: true });
  const cookie = await login(urls[0]!, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connections: Connection[] = [];
  const jobsOf = new Map<string, number>();
  for (let n = 0; n < CONNECTIONS; n++) {
    const connection = await createConnection(urls[n % 3]!, cookie, `partial-${n}`);
    const result = await ingest(urls[(n + 1) % 3]!, connection.apiKey, batchOfJobs(connection.id, `seed-${n}`, JOBS_EACH));
    expect(result.status).toBe(200);
    connections.push(connection);
    jobsOf.set(connection.id, JOBS_EACH);
  }
  const kept = await waitForKeeping(nodes, standbys, jobsOf);
  return { nodes, urls, cookie, connections, jobsOf, kept };
}

/**
 * Writers on the first connection through the nodes that survive, kill -9 of the writer of
 * its partition mid-run; returns the survivors, the partition, and every acknowledged event.
 */
async function killWriterUnderIngest(nodes: Node[], connection: Connection, jobsOf: Map<string, number>) {
  const key = `p.${partitionOf(connection.id, PARTITIONS)}`;
  const writers = await waitForAssignment(nodes.map((node) => node.process.baseUrl), { partitions: PARTITIONS });
  const victim = nodes[writers.get(key)!]!;
  const survivors = nodes.filter((node) => node !== victim);
  let turn = 0;
  const run = startWriters({ writers: 2, batchSize: 20, apiKey: connection.apiKey, connectionId: connection.id, target: () => survivors[turn++ % survivors.length]!.process.baseUrl });
  while (run.acknowledged.size < 200) await Bun.sleep(20);
  const killedAtMs = performance.now();
  await victim.process.kill();
  const after = await waitForAssignment(survivors.map((node) => node.process.baseUrl), { partitions: PARTITIONS });
  const failoverMs = performance.now() - killedAtMs;
  const before = run.acknowledged.size;
  while (run.acknowledged.size < before + 200) await Bun.sleep(20);
  await run.stop();
  jobsOf.set(connection.id, JOBS_EACH + run.acknowledged.size);
  return { key, victim, survivors, newWriter: survivors[after.get(key)!]!, acknowledged: run.acknowledged, failoverMs };
}

test('CLUSTER_STANDBYS=0: each partition lives on its writer alone; kill -9 of a writer: the survivor takes it up from the stream, then writes, nothing acknowledged lost', async () => {
  const { nodes, cookie, connections, jobsOf, kept } = await populatedCluster(0);
  // every partition on exactly one node, the accounts on all: the jobs in memory over all nodes are the jobs there are
  for (const key of partitionKeys(PARTITIONS)) expect([...kept.values()].filter((keys) => keys.includes(key)).length).toBe(key === 'accounts' ? 3 : 1);
  const retained = await Promise.all(nodes.map((node) => retainedOn(node.process.baseUrl)));
  expect(retained.reduce((sum, { jobs }) => sum + jobs, 0)).toBe(CONNECTIONS * JOBS_EACH);

  const appliedBefore = await Promise.all(nodes.map((node) => retainedOn(node.process.baseUrl)));
  const { key, survivors, newWriter, acknowledged, failoverMs } = await killWriterUnderIngest(nodes, connections[0]!, jobsOf);
  // the take-up's replay is counted among the records the new writer's replica applied
  expect((await retainedOn(newWriter.process.baseUrl)).recordsApplied).toBeGreaterThan(appliedBefore[nodes.indexOf(newWriter)]!.recordsApplied);
  const takeUp = newWriter.process.output.match(new RegExp(`took up ${key.replace('.', '\\.')} in (\\d+) ms: (?:no snapshot|snapshot covering seq \\d+), (\\d+) log records replayed`));
  expect(takeUp).not.toBeNull();
  expect(Number(takeUp![2])).toBeGreaterThan(0);
  console.log(`standbys 0: ${key} written again ${Math.round(failoverMs)} ms after kill -9 of its writer; its take-up took ${takeUp![1]} ms and replayed ${takeUp![2]} records`);
  const stored = await externalIdsOf(newWriter.process.baseUrl, cookie, connections[0]!.id);
  expect([...acknowledged].filter((id) => !stored.has(id))).toEqual([]);
  await waitForKeeping(survivors, 0, jobsOf);
}, 120_000);

test('CLUSTER_STANDBYS=1: writer and standby keep each partition; kill -9 of a writer: the standby writes at once and the third node takes up; a node joining takes up its share, the others let go', async () => {
  const { nodes, cookie, connections, jobsOf, kept } = await populatedCluster(1);
  for (const key of partitionKeys(PARTITIONS)) expect([...kept.values()].filter((keys) => keys.includes(key)).length).toBe(key === 'accounts' ? 3 : 2);
  const retained = await Promise.all(nodes.map((node) => retainedOn(node.process.baseUrl)));
  expect(retained.reduce((sum, { jobs }) => sum + jobs, 0)).toBe(2 * CONNECTIONS * JOBS_EACH);

  const outputBefore = new Map(nodes.map((node) => [node.name, node.process.output.length]));
  const { key, victim, survivors, newWriter, acknowledged } = await killWriterUnderIngest(nodes, connections[0]!, jobsOf);
  // the lease went to the heir, the standby: it served the partition with no take-up (the
  // writer the placement wants among two may be the other survivor: it gets it by handover
  // once it keeps it)
  const heirName = new Placement(partitionKeys(PARTITIONS), 1).heir(survivors.map((node) => node.name), key, victim.name);
  const heir = survivors.find((node) => node.name === heirName)!;
  expect(kept.get(heir.name)).toContain(key);
  const heirSaid = heir.process.output.slice(outputBefore.get(heir.name));
  const servedAt = heirSaid.indexOf(`serving ${key} (epoch`);
  expect(servedAt).toBeGreaterThanOrEqual(0);
  expect(heirSaid.slice(0, servedAt).includes(`taking up ${key}:`)).toBe(false);
  const stored = await externalIdsOf(newWriter.process.baseUrl, cookie, connections[0]!.id);
  expect([...acknowledged].filter((id) => !stored.has(id))).toEqual([]);
  // two survivors, one standby: both keep everything now
  await waitForKeeping(survivors, 1, jobsOf);
  const third = survivors.find((node) => node !== newWriter)!;
  expect(await externalIdsOf(third.process.baseUrl, cookie, connections[0]!.id)).toEqual(stored);

  const joined = await startNode('node-d', 1);
  const three = [...survivors, joined];
  const keptNow = await waitForKeeping(three, 1, jobsOf);
  expect(keptNow.get('node-d')!.length).toBeGreaterThan(1);
  expect(joined.process.output).toMatch(/keeping \d+ of 9 partitions \(CLUSTER_STANDBYS=1, 3 live nodes/);
  // what an operator reads: each node's plan at start, what it took up and let go
  for (const node of three) {
    const lines = node.process.output.split('\n').filter((line) => /keeping \d+ of|recovered \d+ partitions|taking up p|took up p|let go of p/.test(line));
    console.log(`${node.name}:\n  ${lines.map((line) => line.replace(/^.*?(keeping|recovered|taking up|took up|let go)/, '$1').replace(/ \{.*$/, '')).join('\n  ')}`);
  }
  for (const survivor of survivors) {
    const letGo = ruleFor(survivor.name, survivors.map((node) => node.name), 1).filter((partition) => !keptNow.get(survivor.name)!.includes(partition));
    for (const partition of letGo) expect(survivor.process.output).toMatch(new RegExp(`let go of ${partition.replace('.', '\\.')} \\(kept by .*\\): dropped \\d+ connections`));
  }
}, 150_000);
