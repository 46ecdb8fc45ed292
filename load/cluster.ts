/**
 * The cluster row of the bench: what the log on JetStream, forwarding between nodes and
 * several partition writers cost, all processes on this machine (they share its cores, so
 * the figures show cost, not scale), and the failover time.
 *
 *   npm run bench -- --cluster          # = npx bun load/cluster.ts
 *   npx bun load/cluster.ts --duration 5 --connections 6 --lease-ms 10000
 *
 * Needs Debian's `nats-server` (the default bench does not). Runs, in this order and in one
 * process so the ratios compare like with like:
 *   (a) 1 node with the local log (FSYNC=always, the default);
 *   (b) 1 node on JetStream: a 3-server NATS cluster on loopback, replicas 3, writing all
 *       16 partitions;
 *   (c) 3 nodes on the same JetStream cluster (a fresh stream), one connection, senders
 *       spread evenly over all three: one node writes the connection's partition, two
 *       thirds of the requests are forwarded to it, and every node applies every record to
 *       its replica (a forwarding node holds the answer until it has);
 *   (d) 3 nodes, each writing about a third of the 16 partitions, one connection per
 *       sender, the connections chosen so that every node writes the partitions of as many
 *       of them, each sender sending to the node writing its connection's partition (as a
 *       client that knows the layout would; (c) shows what forwarding adds);
 *   then the failover: kill -9 of the writer of (c)'s connection, and the time until the
 *       first ingest acknowledged through a surviving node (senders retry every 503 or
 *       refused connection), with the new writer's takeover lines; (c) and (d) run with
 *       CLUSTER_STANDBYS at its default, so the new writer is a standby that is current;
 *   (e) the failover with CLUSTER_STANDBYS=0: 3 fresh nodes, one connection filled for
 *       --fill seconds through its writer, then kill -9 of that writer: the survivor takes
 *       the partition up (its snapshot object and the stream after it) before it writes;
 *       the take-up's time and records replayed are printed.
 * Every scenario sends 1,000-event bodies with --connections senders in all (default 6).
 * Options: --duration s (default 8), --warmup s (default 2), --connections n, --lease-ms
 * (CLUSTER_LEASE_MS of the nodes, default 10000 as in production), --fill s (default 8),
 * --snapshot-log-mb n (SNAPSHOT_LOG_MB of (e)'s nodes: a smaller value has the take-up load
 * a snapshot and replay less), --failover-only (skip (a) to (d)).
 */
import { runCannon, type CannonResult } from './cannon.ts';
import { nextSequence, stamp } from './events.ts';
import { templatesFor } from './ingest.ts';
import { LOAD_ADMIN, createConnection, login, startService, type Service } from './service.ts';
import { fmtCount, fmtMs, machineDescription, note, num, parseArgs, sleep, table } from './util.ts';
import { startNatsCluster, type NatsTestCluster } from '../test/support/nats-cluster.ts';
import { partitionOf } from '../actors/partition-of.ts';

const BATCH = 1000;
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
/** CLUSTER_PARTITIONS of the bench's nodes (the default). */
const PARTITIONS = 16;

interface Scenario {
  label: string;
  nodes: number;
  senders: number;
  eventsPerS: number;
  p50: number;
  p99: number;
  failed: number;
}

interface Target {
  baseUrl: string;
  apiKey: string;
  connectionId: string;
}

export async function runClusterBench(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const args = parseArgs(argv);
  const durationS = num(args, 'duration', 8);
  const warmupS = num(args, 'warmup', 2);
  const senders = num(args, 'connections', 6);
  const leaseMs = num(args, 'lease-ms', 10_000);
  const fillS = num(args, 'fill', 8);
  const failoverOnly = args['failover-only'] !== undefined;
  const snapshotLogMb = args['snapshot-log-mb'] === undefined ? undefined : String(args['snapshot-log-mb']);
  const scenarios: Scenario[] = [];
  const services: Service[] = [];
  const clusters: NatsTestCluster[] = [];
  let failoverMs: number | null = null;
  let takeover: string[] = [];
  let standbysZero: FailoverWithoutStandbys | null = null;
  try {
    if (!failoverOnly) {
      note('(a) 1 node, local log');
      const local = await startService({ env: { DAILY_EVENT_LIMIT: '0' }, label: 'local', noSession: true });
      services.push(local);
      const localTarget = await sessionOn(local.baseUrl);
      scenarios.push(await measure('(a) 1 node, local log (FSYNC=always)', [local.baseUrl], localTarget, senders, durationS, warmupS));
      await local.cleanup();

      note('(b) 1 node on JetStream (3 NATS servers, replicas 3)');
      const natsB = await startNatsCluster();
      clusters.push(natsB);
      const single = await startNode(natsB.url, 'bench-b', leaseMs);
      services.push(single);
      await waitForWriters([single.baseUrl]);
      const singleTarget = await sessionOn(single.baseUrl);
      scenarios.push(await measure('(b) 1 node on JetStream', [single.baseUrl], singleTarget, senders, durationS, warmupS));
      await single.cleanup();
      await natsB.stop();

      note('(c) 3 nodes on JetStream, one connection, senders spread over all three');
      const natsC = await startNatsCluster();
      clusters.push(natsC);
      const nodes = await Promise.all(['bench-c1', 'bench-c2', 'bench-c3'].map((name) => startNode(natsC.url, name, leaseMs)));
      services.push(...nodes);
      const urls = nodes.map((node) => node.baseUrl);
      let writers = await waitForWriters(urls);
      const target = await sessionOn(urls[0]!);
      scenarios.push(await measure('(c) 3 nodes, 1 connection (2/3 forwarded)', urls, target, senders, durationS, warmupS));

      note('(d) 3 nodes, each writing a third of the partitions, one connection per sender sent to its writer');
      writers = await waitForWriters(urls);
      const targets = await balancedTargets(urls, writers, senders);
      scenarios.push(await measureMany('(d) 3 nodes, partitions over 3 writers', targets, durationS, warmupS));

      const ownerIndex = writers.get(`p.${partitionOf(target.connectionId, PARTITIONS)}`)!;
      note(`failover: kill -9 of the writer of (c)'s connection, then ingest through the survivors until one is acknowledged (CLUSTER_LEASE_MS=${leaseMs})`);
      const survivors = nodes.filter((_, index) => index !== ownerIndex);
      failoverMs = await measureFailover(nodes[ownerIndex]!, survivors.map((node) => node.baseUrl), target);
      // what the time went to: the lease lapse, then the new writer catching up (it followed the log as a replica)
      const key = `p.${partitionOf(target.connectionId, PARTITIONS)}`.replace('.', '\\.');
      takeover = survivors.flatMap((node) => node.logs.filter((line) => new RegExp(`took over the lease ${key} |caught up \\d+ log records of jobwatch\\.log\\.${key} `).test(line)));
    }

    standbysZero = await failoverWithoutStandbys({ leaseMs, fillS, senders, snapshotLogMb }, services, clusters);
  } finally {
    for (const service of services) await service.cleanup().catch(() => undefined);
    for (const cluster of clusters) await cluster.stop().catch(() => undefined);
  }

  console.log(`\ncluster bench, ${new Date().toISOString()}, ${machineDescription()}`);
  if (!failoverOnly) printScenarios(scenarios, { senders, durationS, warmupS, leaseMs, failoverMs, takeover });
  if (standbysZero !== null) printFailoverWithoutStandbys(standbysZero, { leaseMs, fillS, snapshotLogMb });
}

function printScenarios(
  scenarios: Scenario[],
  run: { senders: number; durationS: number; warmupS: number; leaseMs: number; failoverMs: number | null; takeover: string[] },
): void {
  const base = scenarios[0]?.eventsPerS ?? 0;
  const rows = scenarios.map((s) => [
    s.label,
    String(s.nodes),
    String(s.senders),
    fmtCount(s.eventsPerS),
    base > 0 ? `${(s.eventsPerS / base).toFixed(2)}x` : '',
    fmtMs(s.p50),
    fmtMs(s.p99),
    s.failed === 0 ? 'ok' : `${s.failed} failed`,
  ]);
  console.log(`1,000-event bodies, ${run.senders} senders in all, ${run.durationS} s each after ${run.warmupS} s warm-up; ratios against (a) of this run`);
  console.log(table(['scenario', 'nodes', 'senders', 'events/s', 'vs (a)', 'p50', 'p99', 'errors'], rows));
  console.log(
    run.failoverMs === null
      ? 'failover: not measured'
      : `failover: ${fmtMs(run.failoverMs)} from kill -9 of the writer of (c)'s connection to the first ingest acknowledged through a surviving node (CLUSTER_LEASE_MS=${run.leaseMs})`,
  );
  for (const line of run.takeover) console.log(`  ${logText(line)}`);
}

interface FailoverWithoutStandbys {
  failoverMs: number;
  filled: Scenario;
  /** the survivors' lines about the partition after the kill: its take-up and takeover */
  lines: string[];
}

interface FailoverOptions {
  leaseMs: number;
  fillS: number;
  senders?: number;
  snapshotLogMb: string | undefined;
}

/**
 * (e): 3 fresh nodes with CLUSTER_STANDBYS=0, one connection's partition filled through its
 * writer, kill -9 of that writer; the survivor takes the partition up before it writes.
 */
async function failoverWithoutStandbys(options: FailoverOptions, services: Service[], clusters: NatsTestCluster[]): Promise<FailoverWithoutStandbys> {
  const { leaseMs, fillS, snapshotLogMb } = options;
  note(`(e) failover with CLUSTER_STANDBYS=0: one connection filled for ${fillS} s through its writer, then kill -9 of that writer`);
  const nats = await startNatsCluster();
  clusters.push(nats);
  const nodes = await Promise.all(['bench-e1', 'bench-e2', 'bench-e3'].map((name) => startNode(nats.url, name, leaseMs, { CLUSTER_STANDBYS: '0', ...(snapshotLogMb === undefined ? {} : { SNAPSHOT_LOG_MB: snapshotLogMb }) })));
  services.push(...nodes);
  const urls = nodes.map((node) => node.baseUrl);
  const writers = await waitForWriters(urls);
  const target = await sessionOn(urls[0]!);
  const key = `p.${partitionOf(target.connectionId, PARTITIONS)}`;
  const writer = writers.get(key)!;
  const filled = await measure('(e) filling the partition', [urls[writer]!], { ...target, baseUrl: urls[writer]! }, options.senders ?? 6, fillS, 0);
  const survivors = nodes.filter((_, index) => index !== writer);
  const logsBefore = survivors.map((node) => node.logs.length);
  const failoverMs = await measureFailover(nodes[writer]!, survivors.map((node) => node.baseUrl), target);
  const escaped = key.replace('.', '\\.');
  const about = new RegExp(`loaded snapshot ${escaped} |took up ${escaped} in |took over the lease ${escaped} |caught up \\d+ log records of jobwatch\\.log\\.${escaped} `);
  return { failoverMs, filled, lines: survivors.flatMap((node, index) => node.logs.slice(logsBefore[index]).filter((line) => about.test(line))) };
}

function printFailoverWithoutStandbys({ failoverMs, filled, lines }: FailoverWithoutStandbys, { leaseMs, fillS, snapshotLogMb }: FailoverOptions): void {
  console.log(
    `failover with CLUSTER_STANDBYS=0: ${fmtMs(failoverMs)} from kill -9 of the writer to the first ingest acknowledged through a survivor, ` +
      `the partition holding ${fmtCount(filled.eventsPerS * fillS)} events (filled at ${fmtCount(filled.eventsPerS)} events/s for ${fillS} s; CLUSTER_LEASE_MS=${leaseMs}` +
      `${snapshotLogMb === undefined ? '' : `, SNAPSHOT_LOG_MB=${snapshotLogMb}`})`,
  );
  for (const line of lines) console.log(`  ${logText(line)}`);
}

/** A node's log line without its timestamp, level and fields. */
function logText(line: string): string {
  return line.replace(/^\[[^\]]*\] [A-Z]+: /, '').replace(/ \{.*$/, '');
}

function startNode(natsUrl: string, nodeId: string, leaseMs: number, extra: Record<string, string> = {}): Promise<Service> {
  return startService({
    env: { DAILY_EVENT_LIMIT: '0', CLUSTER_NATS_URL: natsUrl, CLUSTER_NODE_ID: nodeId, CLUSTER_SECRET, CLUSTER_LEASE_MS: String(leaseMs), ...extra },
    label: nodeId,
    noSession: true,
  });
}

/** Who writes each partition (key -> index into `baseUrls`), once every one of the 17 has a writer. */
export async function waitForWriters(baseUrls: string[], timeoutMs = 60_000): Promise<Map<string, number>> {
  const keys = [...Array.from({ length: PARTITIONS }, (_, partition) => `p.${partition}`), 'accounts'];
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const writes = await Promise.all(
      baseUrls.map(async (url) => ((await fetch(`${url}/api/health`).then((response) => response.json()).catch(() => null)) as { writes?: string[] } | null)?.writes ?? []),
    );
    const writer = new Map<string, number>();
    writes.forEach((list, index) => list.forEach((key) => writer.set(key, index)));
    if (keys.every((key) => writer.has(key))) return writer;
    await sleep(50);
  }
  throw new Error(`not every partition of ${baseUrls.join(', ')} had a writer within ${timeoutMs} ms`);
}

/** `count` connections, as many written by each node as can be (made until each node has its share), each with the URL of its writer. */
async function balancedTargets(baseUrls: string[], writers: Map<string, number>, count: number): Promise<Target[]> {
  const cookie = await login(baseUrls[0]!, LOAD_ADMIN.email, LOAD_ADMIN.password);
  const share = baseUrls.map((_, index) => Math.floor(count / baseUrls.length) + (index < count % baseUrls.length ? 1 : 0));
  const targets: Target[] = [];
  for (let made = 0; targets.length < count; made++) {
    if (made > 50 * count) throw new Error('could not spread the connections over the writers');
    const connection = await createConnection(baseUrls[0]!, cookie, `cluster-bench-${Date.now()}-${made}`);
    const writer = writers.get(`p.${partitionOf(connection.connectionId, PARTITIONS)}`)!;
    if (share[writer]! === 0) continue;
    share[writer]! -= 1;
    targets.push({ baseUrl: baseUrls[writer]!, ...connection });
  }
  return targets;
}

async function sessionOn(baseUrl: string): Promise<Target> {
  const cookie = await login(baseUrl, LOAD_ADMIN.email, LOAD_ADMIN.password);
  const connection = await createConnection(baseUrl, cookie, `cluster-bench-${Date.now()}`);
  return { baseUrl, ...connection };
}

/** `senders` split evenly over `baseUrls`, all at once; events/s summed over the nodes. */
async function measure(label: string, baseUrls: string[], target: Target, senders: number, durationS: number, warmupS: number): Promise<Scenario> {
  const templates = templatesFor(target.connectionId, BATCH);
  let turn = 0;
  const run = (durationS: number): Promise<CannonResult[]> =>
    Promise.all(
      baseUrls.map((url, index) =>
        runCannon({
          label: `${label} via ${url}`,
          url,
          method: 'POST',
          path: '/api/ingest',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
          nextBody: () => stamp(templates[turn++ % templates.length]!, nextSequence()),
          connections: Math.floor(senders / baseUrls.length) + (index < senders % baseUrls.length ? 1 : 0),
          durationS,
        }),
      ),
    );
  if (warmupS > 0) await run(warmupS);
  return summary(label, baseUrls.length, senders, await run(durationS));
}

/** One sender per target (its own connection, sent to its writer), all at once; events/s summed. */
async function measureMany(label: string, targets: Target[], durationS: number, warmupS: number): Promise<Scenario> {
  const run = (durationS: number): Promise<CannonResult[]> =>
    Promise.all(
      targets.map((target) => {
        const templates = templatesFor(target.connectionId, BATCH);
        let turn = 0;
        return runCannon({
          label: `${label} via ${target.baseUrl}`,
          url: target.baseUrl,
          method: 'POST',
          path: '/api/ingest',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
          nextBody: () => stamp(templates[turn++ % templates.length]!, nextSequence()),
          connections: 1,
          durationS,
        });
      }),
    );
  if (warmupS > 0) await run(warmupS);
  return summary(label, new Set(targets.map((target) => target.baseUrl)).size, targets.length, await run(durationS));
}

function summary(label: string, nodes: number, senders: number, results: CannonResult[]): Scenario {
  const weighted = (pick: (result: CannonResult) => number): number =>
    results.reduce((sum, result) => sum + pick(result) * result.ok, 0) / Math.max(1, results.reduce((sum, result) => sum + result.ok, 0));
  return {
    label,
    nodes,
    senders,
    eventsPerS: results.reduce((sum, result) => sum + result.rps, 0) * BATCH,
    p50: weighted((result) => result.p50),
    p99: Math.max(...results.map((result) => result.p99)),
    failed: results.reduce((sum, result) => sum + result.non2xx + result.errors, 0),
  };
}

/** Time from SIGKILL of the owner to the first 200 for an ingest sent to a survivor (each attempt a fresh body). */
async function measureFailover(owner: Service, survivors: string[], target: Target): Promise<number> {
  const templates = templatesFor(target.connectionId, BATCH);
  const killedAtMs = performance.now();
  process.kill(owner.pid!, 'SIGKILL');
  for (let attempt = 0; performance.now() - killedAtMs < 120_000; attempt++) {
    const url = survivors[attempt % survivors.length]!;
    const status = await fetch(`${url}/api/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
      body: stamp(templates[attempt % templates.length]!, nextSequence()),
      signal: AbortSignal.timeout(30_000),
    }).then(
      async (response) => (await response.arrayBuffer(), response.status),
      () => 0,
    );
    if (status === 200) return performance.now() - killedAtMs;
    await sleep(20);
  }
  throw new Error('no surviving node acknowledged an ingest within 120 s of the kill');
}

if (import.meta.main) await runClusterBench();
