/**
 * The cluster's memory row: what each node of a 3-node cluster keeps resident when it holds
 * only the partitions it writes or stands by for (CLUSTER_STANDBYS), against one node
 * holding every connection, all with the same jobs (issue 36's target: 3 nodes, 1M jobs over
 * 30 connections, each node at most 0.75 of the single node with 1 standby, at most 0.45
 * with none). Beside each node: the partitions it keeps and the log records it applied to
 * its engine (its own writes and the records it followed), so the division shows in work
 * as well as in bytes.
 *
 *   npm run bench -- --cluster-memory       # = npx bun load/cluster-memory.ts
 *   npx bun load/cluster-memory.ts --jobs 200k --connections 30 --standbys 1,0
 *
 * Every configuration runs on a fresh 3-server NATS cluster (Debian's `nats-server`), one
 * after the other in this process: first one node (the baseline: it writes and keeps all
 * 16 partitions), then three nodes with each `--standbys` value. Jobs are sent as 1,000-event
 * bodies (about 333 jobs each, whole job progressions) spread evenly over the connections,
 * each body to the node writing its connection's partition. Resident memory is sampled
 * after the nodes have applied everything and stood still for `--settle` seconds.
 */
import { waitForWriters } from './cluster.ts';
import { nextSequence, stamp } from './events.ts';
import { templatesFor } from './ingest.ts';
import { LOAD_ADMIN, createConnection, login, startService, type Service } from './service.ts';
import { fmtCount, machineDescription, note, num, parseArgs, sleep, str, table } from './util.ts';
import { startNatsCluster, type NatsTestCluster } from '../test/support/nats-cluster.ts';
import { partitionOf } from '../actors/partition-of.ts';

const BATCH = 1_000;
/** Jobs in one 1,000-event body of whole progressions (load/events.ts: at most 3 events a job, a few extras). */
const JOBS_PER_BODY = 333;
const PARTITIONS = 16;
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

interface NodeFigures {
  node: string;
  rssBytes: number;
  keeps: number;
  writes: number;
  recordsApplied: number | null;
}

interface Configuration {
  label: string;
  standbys: string;
  nodes: NodeFigures[];
  jobsSent: number;
}

export async function runClusterMemoryBench(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const args = parseArgs(argv);
  const jobs = num(args, 'jobs', 1_000_000);
  const connections = num(args, 'connections', 30);
  const settleS = num(args, 'settle', 5);
  const standbysList = str(args, 'standbys', '1,0').split(',').map((value) => value.trim());
  const results: Configuration[] = [];
  results.push(await runConfiguration({ label: '1 node, every connection', nodes: 1, standbys: 'all', jobs, connections, settleS }));
  for (const standbys of standbysList) {
    results.push(await runConfiguration({ label: `3 nodes, CLUSTER_STANDBYS=${standbys}`, nodes: 3, standbys, jobs, connections, settleS }));
  }
  const base = results[0]!.nodes[0]!.rssBytes;
  const rows = results.flatMap((configuration) =>
    configuration.nodes.map((node) => [
      configuration.label,
      node.node,
      `${(node.rssBytes / 1024 / 1024).toFixed(0)} MB`,
      `${(node.rssBytes / base).toFixed(2)}`,
      `${node.keeps}`,
      `${node.writes}`,
      node.recordsApplied === null ? 'n/a' : fmtCount(node.recordsApplied),
    ]),
  );
  console.log(`\ncluster memory bench, ${new Date().toISOString()}, ${machineDescription()}`);
  console.log(`${fmtCount(results[0]!.jobsSent)} jobs over ${connections} connections, ${PARTITIONS} partitions; resident memory after ${settleS} s still, against the single node of this run`);
  console.log(table(['configuration', 'node', 'resident', 'vs 1 node', 'keeps', 'writes', 'records applied'], rows));
  for (const configuration of results.slice(1)) {
    const worst = Math.max(...configuration.nodes.map((node) => node.rssBytes)) / base;
    const target = configuration.standbys === '0' ? 0.45 : configuration.standbys === '1' ? 0.75 : null;
    if (target !== null) console.log(`${configuration.label}: the largest node ${worst.toFixed(2)} of one node (target <= ${target}: ${worst <= target ? 'met' : 'NOT MET'})`);
  }
}

async function runConfiguration(options: { label: string; nodes: number; standbys: string; jobs: number; connections: number; settleS: number }): Promise<Configuration> {
  note(`${options.label}: starting a 3-server NATS cluster and ${options.nodes} node(s)`);
  const nats: NatsTestCluster = await startNatsCluster();
  const nodes: Service[] = [];
  try {
    for (let index = 0; index < options.nodes; index++) nodes.push(await startNode(nats.url, `mem-${index + 1}`, options.standbys));
    const urls = nodes.map((node) => node.baseUrl);
    const writers = await waitForWriters(urls);
    const cookie = await login(urls[0]!, LOAD_ADMIN.email, LOAD_ADMIN.password);
    const targets: Array<{ connectionId: string; apiKey: string; baseUrl: string }> = [];
    for (let index = 0; index < options.connections; index++) {
      const connection = await createConnection(urls[0]!, cookie, `memory-bench-${index}`);
      targets.push({ ...connection, baseUrl: urls[writers.get(`p.${partitionOf(connection.connectionId, PARTITIONS)}`)!]! });
    }
    const bodiesPerConnection = Math.ceil(options.jobs / JOBS_PER_BODY / options.connections);
    note(`${options.label}: sending ${fmtCount(bodiesPerConnection * options.connections * BATCH)} events (${fmtCount(bodiesPerConnection * options.connections * JOBS_PER_BODY)} jobs)`);
    await Promise.all(targets.map((target) => send(target, bodiesPerConnection)));
    await untilApplied(urls);
    await sleep(options.settleS * 1_000);
    const figures: NodeFigures[] = [];
    for (const node of nodes) figures.push(await figuresOf(node));
    return { label: options.label, standbys: options.standbys, nodes: figures, jobsSent: bodiesPerConnection * options.connections * JOBS_PER_BODY };
  } finally {
    for (const node of nodes) await node.cleanup().catch(() => undefined);
    await nats.stop().catch(() => undefined);
  }
}

function startNode(natsUrl: string, nodeId: string, standbys: string): Promise<Service> {
  return startService({
    env: {
      DAILY_EVENT_LIMIT: '0',
      MAX_JOBS_PER_CONNECTION: '1000000',
      CLUSTER_NATS_URL: natsUrl,
      CLUSTER_NODE_ID: nodeId,
      CLUSTER_SECRET,
      CLUSTER_STANDBYS: standbys,
      METRICS_TOKEN,
    },
    label: nodeId,
    noSession: true,
  });
}

/** `bodies` 1,000-event bodies to the connection's writer, two at a time; every one must be accepted. */
async function send(target: { connectionId: string; apiKey: string; baseUrl: string }, bodies: number): Promise<void> {
  const templates = templatesFor(target.connectionId, BATCH);
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < bodies) {
      const body = Buffer.from(stamp(templates[next++ % templates.length]!, nextSequence()));
      const response = await fetch(`${target.baseUrl}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
        body,
      });
      if (response.status !== 202 && response.status !== 200) throw new Error(`ingest to ${target.baseUrl} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all([sender(), sender()]);
}

/** Until every node's replica applied the log to its end (lag 0 on every health answer). */
async function untilApplied(urls: string[], timeoutMs = 300_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const healths = await Promise.all(urls.map((url) => fetch(`${url}/api/health`).then((response) => response.json() as Promise<{ replica?: { lag?: number } }>)));
    if (healths.every((health) => health.replica?.lag === 0)) return;
    await sleep(200);
  }
  throw new Error(`the nodes had not applied the log within ${timeoutMs} ms`);
}

async function figuresOf(node: Service): Promise<NodeFigures> {
  const health = (await (await fetch(`${node.baseUrl}/api/health`)).json()) as { node: string; writes?: string[]; keeps?: string[] };
  const metrics = await (await fetch(`${node.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const applied = /^jobwatch_replica_records_applied_total(?:\{[^}]*\})? (\d+(?:\.\d+)?(?:e\+?\d+)?)$/m.exec(metrics);
  const rssBytes = node.rssBytes();
  if (rssBytes === null) throw new Error(`no resident memory for ${node.label}`);
  const partitionsIn = (keys: string[] | undefined): number => (keys ?? []).filter((key) => key.startsWith('p.')).length;
  return {
    node: health.node,
    rssBytes,
    keeps: health.keeps === undefined ? PARTITIONS : partitionsIn(health.keeps),
    writes: partitionsIn(health.writes),
    recordsApplied: applied === null ? null : Number(applied[1]),
  };
}

if (import.meta.main) await runClusterMemoryBench();
