/**
 * Restart from the per-partition snapshot objects plus the stream's tail. Each writer
 * snapshots its own partitions (`p.<n>` with that partition's connections, `accounts` with
 * the accounts); a clean stop snapshots what it writes and hands it over; a start loads
 * every partition's snapshot, reconciles, and replays the stream in order from the oldest
 * covered sequence (each partition skipping what its snapshot covers):
 *
 * 1. three nodes stopped cleanly and started again, then killed with kill -9 and started
 *    again: both times the state through every node equals the one served before;
 * 2. a partition snapshot taken under concurrent ingest covers exactly what it captured:
 *    the restart neither loses nor repeats a record.
 */
import { afterAll, expect, test } from 'bun:test';
import { partitionOf } from '../../actors/partition-of.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  cleanUpServices,
  createConnection,
  getJson,
  ingest,
  jobEvent,
  listAllJobs,
  login,
  makeDataDir,
  startService,
  type ServiceProcess,
} from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { explainingFailure, missingJobs, nodeEnv, startWriters, waitForAssignment } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

const NAMES = ['node-1', 'node-2', 'node-3'];

async function startAll(dataDirs: string[]): Promise<ServiceProcess[]> {
  const nodes = await Promise.all(NAMES.map((name, index) => startService({ dataDir: dataDirs[index]!, env: nodeEnv(nats!.url, name) })));
  await waitForAssignment(nodes.map((node) => node.baseUrl), { spread: true });
  return nodes;
}

/** Since before the test's jobs: the task metrics are read from here on (`to` is now, when each read is made). */
const METRICS_FROM = new Date(Date.now() - 3_600_000).toISOString();

/** Each task's counts and percentiles, and the markers: what the task metrics say, whatever the moment of the read. */
async function taskMetricsThrough(baseUrl: string, cookie: string): Promise<unknown> {
  const tasks = (await getJson(baseUrl, `/api/metrics/tasks?from=${METRICS_FROM}`, cookie)).body as { data: Array<{ task: string; current: Record<string, unknown> }> };
  const { completed, failed, runTime, waitTime } = tasks.data[0]?.current ?? {};
  const markers = (await getJson(baseUrl, `/api/markers?from=${METRICS_FROM}`, cookie)).body as { data: Array<{ name: string }> };
  return { tasks: tasks.data.map((row) => row.task), completed, failed, runTime, waitTime, markers: markers.data.map((marker) => marker.name) };
}

/** What every node serves: the jobs, the connections (with their usage) and the task metrics. */
async function stateThrough(nodes: ServiceProcess[], cookie: string): Promise<unknown[]> {
  return Promise.all(
    nodes.map(async (node) => ({
      jobs: await listAllJobs(node.baseUrl, cookie, 100),
      connections: (await getJson(node.baseUrl, '/api/connections', cookie)).body,
      taskMetrics: await taskMetricsThrough(node.baseUrl, cookie),
    })),
  );
}

/** `count` jobs of `tasks.blackbox` that ran `runMs` and completed just now. */
function finishedJobs(connectionId: string, prefix: string, count: number, runMs: number) {
  const endMs = Date.now();
  return Array.from({ length: count }, (_, index) => {
    const event = jobEvent(connectionId, `${prefix}-${index}`, endMs, 'completed');
    return { ...event, job: { ...event.job, startedAt: new Date(endMs - runMs * (index + 1)).toISOString(), completedAt: new Date(endMs).toISOString() } };
  });
}

/**
 * The state once every node's replica has applied the writes just acknowledged: a write is
 * read back at once only through the node it went through (read-your-writes), the others
 * apply it within their replication lag, so the reference state is taken when all agree.
 */
async function settledState(nodes: ServiceProcess[], cookie: string): Promise<unknown> {
  for (const deadline = Date.now() + 30_000; ; ) {
    const states = await stateThrough(nodes, cookie);
    if (states.every((state) => Bun.deepEquals(state, states[0]))) return states[0];
    // a reference taken before the nodes agree would fail the comparison after the restart, far from the cause
    if (Date.now() > deadline) expect(states).toEqual(states.map(() => states[0]));
    await Bun.sleep(100);
  }
}

test('all three nodes restarted, cleanly and after kill -9: the state is rebuilt from the partition snapshots and the log, equal to before', async () => {
  nats = await startNatsCluster();
  const dataDirs = NAMES.map((name) => makeDataDir(`cluster-restart-${name}`));
  dirs.push(...dataDirs);
  const started: ServiceProcess[] = [];
  const startAllNoted = async () => {
    const nodes = await startAll(dataDirs);
    started.push(...nodes);
    return nodes;
  };
  await explainingFailure(() => started, async () => {
    let nodes = await startAllNoted();
    const cookie = await login(nodes[0]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const connections = [];
    for (let n = 0; n < 4; n++) connections.push(await createConnection(nodes[n % 3]!.baseUrl, cookie, `restart-${n}`));
    for (const [n, connection] of connections.entries()) {
      for (let batch = 0; batch < 3; batch++) {
        expect((await ingest(nodes[(n + batch) % 3]!.baseUrl, connection.apiKey, batchOfJobs(connection.id, `c${n}-before-${batch}`, 25))).status).toBe(200);
      }
    }
    // task metrics (in the partitions' records and snapshots like everything else) and a marker
    for (const [n, connection] of connections.entries()) {
      expect((await ingest(nodes[n % 3]!.baseUrl, connection.apiKey, finishedJobs(connection.id, `c${n}-done`, 10, 40))).status).toBe(200);
    }
    const marked = await fetch(`${nodes[1]!.baseUrl}/api/markers`, { method: 'POST', headers: { authorization: `Bearer ${connections[0]!.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ connectionId: connections[0]!.id, name: 'deploy 1' }) });
    expect(marked.status).toBe(201);
    const served = await settledState(nodes, cookie);
    expect((served as { jobs: unknown[] }).jobs).toHaveLength(4 * 3 * 25 + 4 * 10);
    expect((served as { taskMetrics: unknown }).taskMetrics).toMatchObject({ tasks: ['tasks.blackbox'], completed: 40, failed: 0, runTime: { count: 40 }, markers: ['deploy 1'] });

    // a clean stop of each: it snapshots the partitions it writes and hands them over
    for (const node of nodes) expect(await node.stop()).toBe(0);
    const stopped = nodes.map((node) => node.output).join('\n');
    for (const connection of connections) expect(stopped).toMatch(new RegExp(`snapshot of p\\.${partitionOf(connection.id, 16)} at seq \\d+`));
    expect(stopped).toMatch(/snapshot of accounts at seq \d+/);

    nodes = await startAllNoted();
    // each node loads snapshots of the partitions it keeps: how many depends on the nodes it saw
    // live when it started (all 17 alone; fewer, down to its writer's share, with CLUSTER_STANDBYS=0)
    for (const node of nodes) expect(node.output).toMatch(/loaded [1-9]\d* of \d+ partition snapshots/);
    expect(await stateThrough(nodes, cookie)).toEqual([served, served, served]);

    for (const [n, connection] of connections.entries()) {
      expect((await ingest(nodes[n % 3]!.baseUrl, connection.apiKey, batchOfJobs(connection.id, `c${n}-after`, 25))).status).toBe(200);
    }
    const before = await settledState(nodes, cookie);
    await Promise.all(nodes.map((node) => node.kill()));

    // the leases were never released: the restart waits them out, then replays the tail after each
    // snapshot (which node takes which lapsed lease depends on which started first: under load one
    // node may join after the others took over everything and get its share by handovers)
    nodes = await startAllNoted();
    expect(nodes.map((node) => node.output).join('\n')).toMatch(/took over the lease \S+ \(epoch \d+\) from node-/);
    expect(await stateThrough(nodes, cookie)).toEqual([before, before, before]);
  });
}, 90_000);

test('a partition snapshot taken under concurrent ingest covers exactly what it captured: the restart neither loses nor repeats a record', async () => {
  nats ??= await startNatsCluster();
  const dataDir = makeDataDir('cluster-snapshot-busy');
  dirs.push(dataDir);
  const env = nodeEnv(nats.url, 'node-busy', { SNAPSHOT_LOG_MB: '1' });
  const node = await startService({ dataDir, env });
  await waitForAssignment([node.baseUrl]);
  const cookie = await login(node.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(node.baseUrl, cookie, 'busy');
  const key = `p.${partitionOf(connection.id, 16)}`;
  const writers = startWriters({ writers: 4, batchSize: 50, apiKey: connection.apiKey, connectionId: connection.id, target: () => node.baseUrl });
  const snapshotLine = new RegExp(`snapshot of ${key.replace('.', '\\.')} at seq (\\d+)`);
  await node.waitFor(snapshotLine, 40_000); // the partition's log passed 1 MB; the writers keep going through it
  await Bun.sleep(500);
  await writers.stop();
  const before = await listAllJobs(node.baseUrl, cookie, 100);
  await node.kill();

  const restarted = await startService({ dataDir, env });
  // the restart loads the newest snapshot of the partition: the one logged, or a later one whose
  // line the kill cut off (on a loaded machine the writers can pass 1 MB of log again before they stop)
  const logged = Number(node.output.match(snapshotLine)?.[1]);
  const loaded = Number(restarted.output.match(new RegExp(`loaded snapshot ${key.replace('.', '\\.')} covering seq (\\d+)`))?.[1]);
  expect(loaded).toBeGreaterThanOrEqual(logged);
  expect(Number(restarted.output.match(/snapshots and (\d+) log records of JOBWATCH_LOG/)?.[1])).toBeGreaterThan(0);
  expect(await listAllJobs(restarted.baseUrl, cookie, 100)).toEqual(before);
  expect(await missingJobs(restarted.baseUrl, cookie, writers.acknowledged)).toEqual([]);
}, 60_000);
