/**
 * The cluster row of the bench: what the log on JetStream and forwarding between nodes
 * cost, all processes on this machine (they share its cores, so the figures show cost,
 * not scale), and the failover time.
 *
 *   npm run bench -- --cluster          # = npx bun load/cluster.ts
 *   npx bun load/cluster.ts --duration 5 --connections 6 --lease-ms 10000
 *
 * Needs Debian's `nats-server` (the default bench does not). Runs, in this order and in one
 * process so the ratios compare like with like:
 *   (a) 1 node with the local log (FSYNC=always, the default);
 *   (b) 1 node on JetStream: a 3-server NATS cluster on loopback, replicas 3;
 *   (c) 3 nodes on the same JetStream cluster (a fresh stream), senders spread evenly over
 *       all three: two thirds of the requests are forwarded by a standby to the owner, and
 *       every standby applies every record to its replica (and holds a forwarded answer
 *       until it has);
 *   then the failover: kill -9 of the owner of (c), and the time until the first ingest
 *       acknowledged through a surviving node (senders retry every 503 or refused connection),
 *       with the new owner's takeover lines (lease lapse, records caught up).
 * Every scenario sends 1,000-event bodies with --connections senders in all (default 6).
 * Options: --duration s (default 8), --warmup s (default 2), --connections n, --lease-ms
 * (CLUSTER_LEASE_MS of the nodes, default 10000 as in production).
 */
import { runCannon, type CannonResult } from './cannon.ts';
import { nextSequence, stamp } from './events.ts';
import { templatesFor } from './ingest.ts';
import { LOAD_ADMIN, createConnection, login, startService, type Service } from './service.ts';
import { fmtCount, fmtMs, machineDescription, note, num, parseArgs, sleep, table } from './util.ts';
import { startNatsCluster, type NatsTestCluster } from '../test/support/nats-cluster.ts';

const BATCH = 1000;
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';

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
  const scenarios: Scenario[] = [];
  const services: Service[] = [];
  const clusters: NatsTestCluster[] = [];
  let failoverMs: number | null = null;
  let takeover: string[] = [];
  try {
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
    await waitForOwner(single.baseUrl);
    const singleTarget = await sessionOn(single.baseUrl);
    scenarios.push(await measure('(b) 1 node on JetStream', [single.baseUrl], singleTarget, senders, durationS, warmupS));
    await single.cleanup();
    await natsB.stop();

    note('(c) 3 nodes on JetStream, senders spread over all three');
    const natsC = await startNatsCluster();
    clusters.push(natsC);
    const owner = await startNode(natsC.url, 'bench-c1', leaseMs);
    services.push(owner);
    await waitForOwner(owner.baseUrl);
    const standbys = [await startNode(natsC.url, 'bench-c2', leaseMs), await startNode(natsC.url, 'bench-c3', leaseMs)];
    services.push(...standbys);
    const nodes = [owner, ...standbys];
    const target = await sessionOn(standbys[0]!.baseUrl);
    scenarios.push(await measure('(c) 3 nodes on JetStream (2/3 forwarded)', nodes.map((node) => node.baseUrl), target, senders, durationS, warmupS));

    note(`failover: kill -9 of the owner, then ingest through the survivors until one is acknowledged (CLUSTER_LEASE_MS=${leaseMs})`);
    failoverMs = await measureFailover(owner, standbys.map((node) => node.baseUrl), target);
    // what the time went to: the lease lapse, then the new owner catching up (it followed the log as a replica)
    takeover = standbys.flatMap((node) => node.logs.filter((line) => /took over the lease|caught up \d+ log records|recovered:/.test(line)));
  } finally {
    for (const service of services) await service.cleanup().catch(() => undefined);
    for (const cluster of clusters) await cluster.stop().catch(() => undefined);
  }

  const base = scenarios[0]!.eventsPerS;
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
  console.log(`\ncluster bench, ${new Date().toISOString()}, ${machineDescription()}`);
  console.log(`1,000-event bodies, ${senders} senders in all, ${durationS} s each after ${warmupS} s warm-up; ratios against (a) of this run`);
  console.log(table(['scenario', 'nodes', 'senders', 'events/s', 'vs (a)', 'p50', 'p99', 'errors'], rows));
  console.log(
    failoverMs === null
      ? 'failover: not measured'
      : `failover: ${fmtMs(failoverMs)} from kill -9 of the owner to the first ingest acknowledged through a surviving node (CLUSTER_LEASE_MS=${leaseMs})`,
  );
  for (const line of takeover) console.log(`  ${line.replace(/^\[[^\]]*\] [A-Z]+: /, '').replace(/ \{.*$/, '')}`);
}

function startNode(natsUrl: string, nodeId: string, leaseMs: number): Promise<Service> {
  return startService({
    env: { DAILY_EVENT_LIMIT: '0', CLUSTER_NATS_URL: natsUrl, CLUSTER_NODE_ID: nodeId, CLUSTER_SECRET, CLUSTER_LEASE_MS: String(leaseMs) },
    label: nodeId,
    noSession: true,
  });
}

/** A cluster node answers /api/health as a standby before it owns the lease: wait for the role. */
async function waitForOwner(baseUrl: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const body = (await fetch(`${baseUrl}/api/health`).then((response) => response.json()).catch(() => null)) as { role?: string } | null;
    if (body?.role === 'owner') return;
    await sleep(50);
  }
  throw new Error(`${baseUrl} did not become the owner within ${timeoutMs} ms`);
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
  const results = await run(durationS);
  const weighted = (pick: (result: CannonResult) => number): number =>
    results.reduce((sum, result) => sum + pick(result) * result.ok, 0) / Math.max(1, results.reduce((sum, result) => sum + result.ok, 0));
  return {
    label,
    nodes: baseUrls.length,
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
