/**
 * Hot read replicas (every node follows every partition): three nodes, each writing some partitions
 * and following all. O is the node that writes the test connection's partition, A and B
 * the other two. The tests run in order on the same nodes:
 *
 * 1. read-your-writes through a node that does not write the partition: each event
 *    ingested through B (forwarded to O) is counted by the very next read through B
 *    (answered by B's replica);
 * 2. reads are answered by the local replica: with O stopped (SIGSTOP, shorter than the
 *    lease), reads through A answer at once with the current data, where a forward would
 *    hang until the writer's deadline;
 * 3. a live stream opened on A receives events ingested through B, and keeps going across
 *    a kill -9 of O: it is fed by A's replica, which goes on following once the
 *    partition's new writer writes; a survivor then stops cleanly (exit 0), handing its
 *    partitions over.
 *
 * Every node keeps every partition here (`CLUSTER_STANDBYS=all`): a node that does not keep
 * a partition answers its reads through a keeper (cross-node-reads.test.ts).
 */
import { beforeAll, expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  getJson,
  ingest,
  login,
  type Connection,
  type ServiceProcess,
} from '../blackbox/service-process.ts';
import { Value } from '@sinclair/typebox/value';
import { Health } from '../../src/openapi/response-models.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { health, startNodes, waitForAssignment, tearDownAfterAll } from './cluster-harness.ts';

const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let o: ServiceProcess;
let a: ServiceProcess;
let b: ServiceProcess;
let cookie: string;
let connection: Connection;
tearDownAfterAll(dirs, () => nats);

beforeAll(async () => {
  nats = await startNatsCluster();
  // every node a replica of every partition, whatever the suite runs with: what is tested here is a replica's
  const nodes = await startNodes(nats.url, ['node-1', 'node-2', 'node-3'], dirs, { CLUSTER_STANDBYS: 'all' });
  cookie = await login(nodes[0]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  connection = await createConnection(nodes[0]!.baseUrl, cookie, 'replicas');
  const writer = (await waitForAssignment(nodes.map((node) => node.baseUrl))).get(`p.${partitionOf(connection.id, 16)}`)!;
  o = nodes[writer]!;
  [a, b] = nodes.filter((node) => node !== o) as [ServiceProcess, ServiceProcess];
}, 60_000);

async function jobTotal(node: ServiceProcess, signal?: AbortSignal): Promise<number> {
  const response = await fetch(`${node.baseUrl}/api/jobs?limit=1`, { headers: { cookie }, signal });
  expect(response.status).toBe(200);
  return ((await response.json()) as { pagination: { total: number } }).pagination.total;
}

test('read-your-writes through a node that does not write the partition: every event ingested through it is in the next read through it', async () => {
  for (let round = 1; round <= 30; round++) {
    const written = await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, `ryw-${round}`, 1));
    expect(written.status).toBe(200);
    expect({ round, total: await jobTotal(b) }).toEqual({ round, total: round });
  }
  expect(b.output).toMatch(/replica recovered at log seq \d+: answering reads here, writes by the writer of their partition/);
  expect(b.output).not.toMatch(/the replica had not applied log seq/);
  const answer = await health(b.baseUrl);
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({ status: 'ok', role: 'node', replica: { following: true, lag: 0 } });
  expect(answer.body.writes).not.toContain(`p.${partitionOf(connection.id, 16)}`);
  expect([...Value.Errors(Health, answer.body)].map((error) => `${error.path}: ${error.message}`)).toEqual([]); // as documented
}, 60_000);

test('reads are answered by the local replica: with the partition writer stopped they still answer at once, with the current data', async () => {
  const total = await jobTotal(o);
  o.proc.kill('SIGSTOP');
  try {
    const sentAtMs = performance.now();
    expect(await jobTotal(a, AbortSignal.timeout(1_000))).toBe(total);
    const me = await getJson(a.baseUrl, '/api/auth/me', cookie);
    expect(me.status).toBe(200);
    expect(JSON.stringify(me.body)).toContain(connection.id);
    expect(performance.now() - sentAtMs).toBeLessThan(1_000); // well inside the lease: O still writes the partition
  } finally {
    o.proc.kill('SIGCONT');
  }
}, 30_000);

test('a live stream receives events ingested through another node and keeps going across a kill -9 of the partition writer', async () => {
  const closing = new AbortController();
  const stream = await fetch(`${a.baseUrl}/api/events/stream?connectionId=${connection.id}`, { headers: { cookie }, signal: closing.signal });
  expect(stream.status).toBe(200);
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  // a read that outlasts a wait is kept for the next wait: a second read would take the chunk it was waiting for
  let reading: ReturnType<typeof reader.read> | undefined;
  const readUntil = async (needle: string, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!text.includes(needle)) {
      reading ??= reader.read();
      const chunk = await Promise.race([reading, Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null)]);
      if (chunk === null) throw new Error(`the stream on A did not show ${needle}; got:\n${text.slice(-2000)}`);
      reading = undefined;
      if (chunk.done) throw new Error(`the stream on A ended before ${needle}; got:\n${text.slice(-2000)}`);
      text += decoder.decode(chunk.value, { stream: true });
    }
  };
  expect((await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'before-kill', 1))).status).toBe(200);
  await readUntil('before-kill-0', 15_000);

  await o.kill();
  const owner = (await waitForAssignment([a.baseUrl, b.baseUrl])).get(`p.${partitionOf(connection.id, 16)}`)!;
  // through B whichever node writes now (B forwards to A, or writes itself); retried like an
  // SDK while the lease moves
  for (;;) {
    const answer = await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'after-kill', 1)).catch(() => ({ status: 0 }));
    if (answer.status === 200) break;
    expect([0, 503]).toContain(answer.status);
    await Bun.sleep(100);
  }
  await readUntil('after-kill-0', 15_000);
  closing.abort();
  // a node stops cleanly: it snapshots and hands its partitions over, and the other takes them
  // at once
  expect(await b.stop()).toBe(0);
  expect(b.output).not.toMatch(/FATAL/);
  await waitForAssignment([a.baseUrl], { timeoutMs: 10_000 });
  console.log(`stream on A kept going across kill -9 of O; the partition's new writer was ${owner === 0 ? 'A' : 'B'}`);
}, 60_000);
