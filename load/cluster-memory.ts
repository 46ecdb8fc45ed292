/**
 * The cluster's memory row: what each node of a 3-node cluster keeps resident when it holds
 * only the partitions it writes or stands by for (CLUSTER_STANDBYS), against one node
 * holding every connection, all with the same jobs (issue 36's target: 3 nodes, 1M jobs over
 * 30 connections, each node at most 0.75 of the single node with 1 standby, at most 0.45
 * with none). Beside each node: the jobs it holds (`jobwatch_jobs_retained`), the partitions
 * it keeps and the log records it applied to its engine (its own writes and the records it
 * followed), so the division shows in work as well as in bytes; and where its memory goes:
 * resident and JavaScript heap as the burst left them, then again after the node's own full
 * collection once it went quiet (MEMORY_RETURN_IDLE_MS, src/service/memory-return.ts; the
 * single node does the same, so the comparison is fair), with the collection's stop and the
 * resident megabytes per 1,000 jobs held (placement and per-job cost told apart).
 *
 *   npm run bench -- --cluster-memory       # = npx bun load/cluster-memory.ts
 *   npx bun load/cluster-memory.ts --jobs 200k --connections 30 --standbys 1,0
 *   npx bun load/cluster-memory.ts --memory-return-idle-ms 0   # no collection: resident after --settle s still
 *   (--rebalance-s: the nodes' CLUSTER_REBALANCE_SECONDS, 10; 0 places by count only;
 *   --memory-return-after-mb: the nodes' MEMORY_RETURN_AFTER_MB, 16 as by default; --lease-ms:
 *   their CLUSTER_LEASE_MS, 30 s: on a loaded machine a 10 s lease lapsed mid-burst and moved
 *   partitions, fencing the old writer, and the run ended there)
 *
 * Every configuration runs on a fresh 3-server NATS cluster (Debian's `nats-server`), one
 * after the other in this process: first one node (the baseline: it writes and keeps all
 * 16 partitions), then three nodes with each `--standbys` value. Jobs are sent as 1,000-event
 * bodies (about 333 jobs each, whole job progressions) spread evenly over the connections,
 * each body to the node writing its connection's partition (looked up again every 2 s: placement
 * by size moves partitions while the burst goes on). Memory is read once the placement has
 * settled: every partition kept by exactly its writer and standbys, and nothing moved for two
 * rebalance intervals.
 */
import { waitForWriters } from './cluster.ts';
import { nextSequence, stamp } from './events.ts';
import { templatesFor } from './ingest.ts';
import { LOAD_ADMIN, createConnection, login, startService, type Service } from './service.ts';
import { fmtCount, fmtMs, machineDescription, note, num, parseArgs, sleep, str, table } from './util.ts';
import { startNatsCluster, type NatsTestCluster } from '../test/support/nats-cluster.ts';
import { partitionOf } from '../actors/partition-of.ts';

const BATCH = 1_000;
/** Jobs in one 1,000-event body of whole progressions (load/events.ts: at most 3 events a job, a few extras). */
const JOBS_PER_BODY = 333;
const PARTITIONS = 16;
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

/** Resident memory and JavaScript heap at one moment. */
interface MemoryReading {
  rssBytes: number;
  heapBytes: number;
}

interface NodeFigures {
  node: string;
  jobsHeld: number;
  /** right after the last record was applied: what the burst left */
  burst: MemoryReading;
  /** after the node's full collection once quiet (or after --settle s when that is off) */
  settled: MemoryReading;
  /** how long that collection stopped the node; null when none ran */
  collectionMs: number | null;
  keeps: number;
  writes: number;
  recordsApplied: number | null;
  /** the node's `memory returned ...` lines (every collection since it started) */
  collectionLines: string[];
}

interface Configuration {
  label: string;
  standbys: string;
  /** placement by size: the maps written (the coordinator's lines) and how long the placement took to settle after the burst */
  placementMoves: string[];
  settledAfterMs: number;
  nodes: NodeFigures[];
  jobsSent: number;
}

export async function runClusterMemoryBench(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const args = parseArgs(argv);
  const jobs = num(args, 'jobs', 1_000_000);
  const connections = num(args, 'connections', 30);
  const settleS = num(args, 'settle', 5);
  const idleMs = num(args, 'memory-return-idle-ms', 5_000);
  const afterMb = num(args, 'memory-return-after-mb', 16);
  const leaseMs = num(args, 'lease-ms', 30_000);
  const rebalanceS = num(args, 'rebalance-s', 10);
  const standbysList = str(args, 'standbys', '1,0').split(',').map((value) => value.trim());
  const common = { jobs, connections, settleS, idleMs, afterMb, leaseMs, rebalanceS };
  const results: Configuration[] = [];
  results.push(await runConfiguration({ label: '1 node, every connection', nodes: 1, standbys: 'all', ...common }));
  for (const standbys of standbysList) {
    // what is measured so far, in case a later configuration does not finish (a long run on a shared machine)
    printResults(results, { connections, settleS, idleMs });
    results.push(await runConfiguration({ label: `3 nodes, CLUSTER_STANDBYS=${standbys}`, nodes: 3, standbys, ...common }));
  }
  printResults(results, { connections, settleS, idleMs });
}

function printResults(results: Configuration[], options: { connections: number; settleS: number; idleMs: number }): void {
  const base = results[0]!.nodes[0]!;
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const rows = results.flatMap((configuration) =>
    configuration.nodes.map((node) => [
      configuration.label,
      node.node,
      fmtCount(node.jobsHeld),
      `${mb(node.burst.rssBytes)} / ${mb(node.burst.heapBytes)}`,
      `${mb(node.settled.rssBytes)} / ${mb(node.settled.heapBytes)}`,
      node.collectionMs === null ? 'none' : fmtMs(node.collectionMs),
      node.jobsHeld === 0 ? 'n/a' : ((node.settled.rssBytes / 1024 / 1024 / node.jobsHeld) * 1000).toFixed(2),
      `${(node.burst.rssBytes / base.burst.rssBytes).toFixed(2)}`,
      `${(node.settled.rssBytes / base.settled.rssBytes).toFixed(2)}`,
      `${node.keeps}`,
      `${node.writes}`,
      node.recordsApplied === null ? 'n/a' : fmtCount(node.recordsApplied),
    ]),
  );
  const settled = options.idleMs > 0 ? `after its full collection once quiet (MEMORY_RETURN_IDLE_MS=${options.idleMs})` : `after ${options.settleS} s still (MEMORY_RETURN_IDLE_MS=0)`;
  console.log(`\ncluster memory bench, ${new Date().toISOString()}, ${machineDescription()}`);
  console.log(`${fmtCount(results[0]!.jobsSent)} jobs over ${options.connections} connections, ${PARTITIONS} partitions; resident / JS heap as the burst left them, and ${settled}; ratios against the single node of this run`);
  console.log(
    table(['configuration', 'node', 'jobs held', 'burst: resident / heap', 'settled: resident / heap', 'collection', 'MB per 1k jobs', 'vs 1 node (burst)', 'vs 1 node (settled)', 'keeps', 'writes', 'records applied'], rows),
  );
  for (const configuration of results.slice(1)) {
    console.log(`${configuration.label}: ${configuration.placementMoves.length} placement moves; the placement settled ${fmtMs(configuration.settledAfterMs)} after the log was applied`);
    for (const line of configuration.placementMoves) console.log(`  ${line.replace(/^\S+ \S+ /, '')}`);
  }
  for (const configuration of results) {
    for (const node of configuration.nodes) for (const line of node.collectionLines) console.log(`${configuration.label}, ${node.node}: ${line.replace(/\s*\{.*\}$/, '')}`);
  }
  for (const configuration of results.slice(1)) {
    const worst = (pick: (node: NodeFigures) => number): number => Math.max(...configuration.nodes.map(pick)) / pick(base);
    const target = configuration.standbys === '0' ? 0.45 : configuration.standbys === '1' ? 0.75 : null;
    if (target === null) continue;
    const settledWorst = worst((node) => node.settled.rssBytes);
    console.log(
      `${configuration.label}: the largest node ${settledWorst.toFixed(2)} of one node settled (target <= ${target}: ${settledWorst <= target ? 'met' : 'NOT MET'}), ` +
        `${worst((node) => node.burst.rssBytes).toFixed(2)} as the burst left them`,
    );
  }
}

interface ConfigurationOptions {
  label: string;
  nodes: number;
  standbys: string;
  jobs: number;
  connections: number;
  settleS: number;
  idleMs: number;
  afterMb: number;
  leaseMs: number;
  rebalanceS: number;
}

async function runConfiguration(options: ConfigurationOptions): Promise<Configuration> {
  note(`${options.label}: starting a 3-server NATS cluster and ${options.nodes} node(s)`);
  const nats: NatsTestCluster = await startNatsCluster();
  const nodes: Service[] = [];
  try {
    for (let index = 0; index < options.nodes; index++) nodes.push(await startNode(nats.url, `mem-${index + 1}`, options.standbys, options));
    const urls = nodes.map((node) => node.baseUrl);
    const writers = await waitForWriters(urls);
    const cookie = await login(urls[0]!, LOAD_ADMIN.email, LOAD_ADMIN.password);
    const targets: Target[] = [];
    const routes = new WriterRoutes(urls, writers);
    for (let index = 0; index < options.connections; index++) {
      const connection = await createConnection(urls[0]!, cookie, `memory-bench-${index}`);
      targets.push({ ...connection, baseUrl: () => routes.urlOf(`p.${partitionOf(connection.connectionId, PARTITIONS)}`) });
    }
    const bodiesPerConnection = Math.ceil(options.jobs / JOBS_PER_BODY / options.connections);
    note(`${options.label}: sending ${fmtCount(bodiesPerConnection * options.connections * BATCH)} events (${fmtCount(bodiesPerConnection * options.connections * JOBS_PER_BODY)} jobs)`);
    await Promise.all(targets.map((target) => send(target, bodiesPerConnection)))
      .catch((error: unknown) => {
        // a node that refused (its log failed, it halted) said why in its own lines
        for (const node of nodes) note(`${node.label}'s last lines:\n${node.logs.slice(-8).join('\n')}`);
        throw error;
      })
      .finally(() => routes.stop());
    await untilApplied(urls);
    const appliedAtMs = performance.now();
    if (options.nodes > 1) await untilPlaced(urls, keptSlots(options.standbys, options.nodes), options.rebalanceS);
    const settledAfterMs = performance.now() - appliedAtMs;
    const burst = await Promise.all(nodes.map((node) => scrape(node)));
    if (options.idleMs > 0) await untilCollected(nodes, burst, options.idleMs);
    else await sleep(options.settleS * 1_000);
    const figures: NodeFigures[] = [];
    for (const [index, node] of nodes.entries()) figures.push(await figuresOf(node, burst[index]!));
    const placementMoves = nodes.flatMap((node) => node.logs.filter((line) => /placement by size: (moved|swapped)/.test(line)));
    return { label: options.label, standbys: options.standbys, placementMoves, settledAfterMs, nodes: figures, jobsSent: bodiesPerConnection * options.connections * JOBS_PER_BODY };
  } finally {
    for (const node of nodes) await node.cleanup().catch(() => undefined);
    await nats.stop().catch(() => undefined);
  }
}

function startNode(natsUrl: string, nodeId: string, standbys: string, memory: { idleMs: number; afterMb: number; leaseMs: number; rebalanceS: number }): Promise<Service> {
  return startService({
    env: {
      DAILY_EVENT_LIMIT: '0',
      MAX_JOBS_PER_CONNECTION: '1000000',
      CLUSTER_NATS_URL: natsUrl,
      CLUSTER_NODE_ID: nodeId,
      CLUSTER_SECRET,
      CLUSTER_STANDBYS: standbys,
      // what is measured is memory, not failover: a lease long enough that a loaded machine's stalls move no partition
      CLUSTER_LEASE_MS: String(memory.leaseMs),
      CLUSTER_REBALANCE_SECONDS: String(memory.rebalanceS),
      METRICS_TOKEN,
      MEMORY_RETURN_IDLE_MS: String(memory.idleMs),
      MEMORY_RETURN_AFTER_MB: String(memory.afterMb),
      // the collection's own line (memory returned ...) is logged at debug; the bench prints it
      LOG_LEVEL: 'debug',
    },
    label: nodeId,
    noSession: true,
  });
}

/** A 503 (a partition moving between writers on a loaded machine) is sent again after its Retry-After, as the SDKs do, this many times at most. */
const RETRIES_503 = 30;

/** `bodies` 1,000-event bodies to the connection's writer, two at a time; every one must be accepted. */
async function send(target: Target, bodies: number): Promise<void> {
  const templates = templatesFor(target.connectionId, BATCH);
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < bodies) {
      const body = Buffer.from(stamp(templates[next++ % templates.length]!, nextSequence()));
      for (let attempt = 0; ; attempt++) {
        const baseUrl = target.baseUrl();
        const response = await fetch(`${baseUrl}/api/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
          body,
        });
        if (response.status === 202 || response.status === 200) {
          await response.arrayBuffer();
          break;
        }
        const text = await response.text();
        if (response.status !== 503 || attempt >= RETRIES_503) throw new Error(`ingest to ${baseUrl} answered ${response.status}: ${text}`);
        await sleep(Number(response.headers.get('retry-after') ?? 1) * 1_000);
      }
    }
  };
  await Promise.all([sender(), sender()]);
}

interface Target {
  connectionId: string;
  apiKey: string;
  /** the node writing the connection's partition now */
  baseUrl: () => string;
}

/** Which node writes each partition, read from the nodes' health every 2 s while the burst goes on. */
class WriterRoutes {
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly urls: string[],
    private writers: Map<string, number>,
  ) {
    this.timer = setInterval(() => void waitForWriters(urls, 2_000).then((writers) => (this.writers = writers)).catch(() => undefined), 2_000);
  }

  urlOf(key: string): string {
    return this.urls[this.writers.get(key) ?? 0]!;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function keptSlots(standbys: string, nodes: number): number {
  return standbys === 'all' ? nodes : Math.min(nodes, 1 + Number(standbys));
}

/**
 * Until the placement settled: every partition kept by exactly `slots` nodes (what a move
 * let go of is gone) and what every node keeps and writes unchanged for two rebalance
 * intervals (the coordinator found nothing more to move).
 */
async function untilPlaced(urls: string[], slots: number, rebalanceS: number, timeoutMs = 900_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const quietMs = Math.max(2 * rebalanceS * 1_000, 5_000);
  let last = '';
  let sinceMs = performance.now();
  while (performance.now() < deadline) {
    const healths = await Promise.all(urls.map((url) => fetch(`${url}/api/health`).then((response) => response.json() as Promise<{ keeps?: string[]; writes?: string[] }>)));
    const signature = JSON.stringify(healths.map((health) => [health.keeps ?? [], health.writes ?? []]));
    const keepers = new Map<string, number>();
    for (const health of healths) for (const key of health.keeps ?? []) if (key.startsWith('p.')) keepers.set(key, (keepers.get(key) ?? 0) + 1);
    const exact = keepers.size === PARTITIONS && [...keepers.values()].every((count) => count === slots);
    if (signature !== last || !exact) {
      last = signature;
      sinceMs = performance.now();
    } else if (performance.now() - sinceMs >= quietMs) return;
    await sleep(1_000);
  }
  throw new Error(`the placement had not settled within ${timeoutMs} ms`);
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

/** One node's /metrics with its resident memory read at the same moment. */
interface Scrape {
  metrics: string;
  memory: MemoryReading;
}

async function scrape(node: Service): Promise<Scrape> {
  const metrics = await (await fetch(`${node.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const rssBytes = node.rssBytes();
  if (rssBytes === null) throw new Error(`no resident memory for ${node.label}`);
  return { metrics, memory: { rssBytes, heapBytes: metricOf(metrics, 'nodejs_heap_size_used_bytes') ?? Number.NaN } };
}

function metricOf(metrics: string, name: string): number | null {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics);
  return match === null ? null : Number(match[1]);
}

/**
 * Until every node ran one more full collection than at `before` (each went quiet after the
 * burst), at most the quiet time and 15 s more: a node that took in less than
 * MEMORY_RETURN_AFTER_MB does not collect, and is read as it is then.
 */
async function untilCollected(nodes: Service[], before: Scrape[], idleMs: number): Promise<void> {
  // a node collects again only after running free 100 times as long as its last collection stopped
  // it (src/service/memory-return.ts): a let-go soon after a collection of a second waits 100 s
  const stoppedS = Math.max(0, ...before.map((scraped) => metricOf(scraped.metrics, 'jobwatch_memory_return_seconds_total') ?? 0));
  const waitMs = idleMs + 15_000 + Math.min(300_000, stoppedS * 100_000);
  const deadline = performance.now() + waitMs;
  const collections = (metrics: string): number => metricOf(metrics, 'jobwatch_memory_returns_total') ?? 0;
  while (performance.now() < deadline) {
    const now = await Promise.all(nodes.map((node) => scrape(node)));
    if (now.every((scraped, index) => collections(scraped.metrics) > collections(before[index]!.metrics))) return;
    await sleep(250);
  }
  note(`not every node collected within ${Math.round(waitMs)} ms of going quiet (less than MEMORY_RETURN_AFTER_MB taken in?): read as they are`);
}

async function figuresOf(node: Service, burst: Scrape): Promise<NodeFigures> {
  const health = (await (await fetch(`${node.baseUrl}/api/health`)).json()) as { node: string; writes?: string[]; keeps?: string[] };
  const settled = await scrape(node);
  const partitionsIn = (keys: string[] | undefined): number => (keys ?? []).filter((key) => key.startsWith('p.')).length;
  const secondsCollecting = (metrics: string): number => metricOf(metrics, 'jobwatch_memory_return_seconds_total') ?? 0;
  const collected = (metricOf(settled.metrics, 'jobwatch_memory_returns_total') ?? 0) > (metricOf(burst.metrics, 'jobwatch_memory_returns_total') ?? 0);
  return {
    node: health.node,
    jobsHeld: metricOf(settled.metrics, 'jobwatch_jobs_retained') ?? 0,
    burst: burst.memory,
    settled: settled.memory,
    collectionMs: collected ? (secondsCollecting(settled.metrics) - secondsCollecting(burst.metrics)) * 1000 : null,
    keeps: health.keeps === undefined ? PARTITIONS : partitionsIn(health.keeps),
    writes: partitionsIn(health.writes),
    recordsApplied: metricOf(settled.metrics, 'jobwatch_replica_records_applied_total'),
    collectionLines: node.logs.filter((line) => line.includes('memory returned after')),
  };
}

if (import.meta.main) await runClusterMemoryBench();
