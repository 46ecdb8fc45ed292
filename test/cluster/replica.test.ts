/**
 * Hot read replicas (stage 2b-i): O owns the log, A and B are standbys that follow it.
 * The tests run in order on the same nodes:
 *
 * 1. read-your-writes through a standby: each event ingested through B (forwarded to O)
 *    is counted by the very next read through B (answered by B's replica);
 * 2. reads through a standby are answered by its replica: with O stopped (SIGSTOP, shorter
 *    than the lease), reads through A answer at once with the current data, where a
 *    forward would hang until the owner's deadline;
 * 3. a live stream opened on A receives events ingested through B, and keeps going across
 *    a kill -9 of O: it is fed by A's replica, which goes on following once a new owner
 *    writes; the node still a standby then stops cleanly (exit 0).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  getJson,
  ingest,
  killAllServices,
  login,
  makeDataDir,
  removeDir,
  startService,
  type Connection,
  type ServiceProcess,
} from '../blackbox/service-process.ts';
import { Value } from '@sinclair/typebox/value';
import { Health } from '../../src/openapi/response-models.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { health, nodeEnv, startStandby, waitForOwner } from './cluster-harness.ts';

const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let o: ServiceProcess;
let a: ServiceProcess;
let b: ServiceProcess;
let cookie: string;
let connection: Connection;
afterAll(async () => {
  await killAllServices();
  await nats?.stop();
  dirs.forEach(removeDir);
});

beforeAll(async () => {
  nats = await startNatsCluster();
  const [dirO, dirA, dirB] = ['replica-o', 'replica-a', 'replica-b'].map(makeDataDir);
  dirs.push(dirO!, dirA!, dirB!);
  o = await startService({ dataDir: dirO!, env: nodeEnv(nats.url, 'node-o') });
  a = await startStandby({ dataDir: dirA!, env: nodeEnv(nats.url, 'node-a') });
  b = await startStandby({ dataDir: dirB!, env: nodeEnv(nats.url, 'node-b') });
  cookie = await login(b.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  connection = await createConnection(b.baseUrl, cookie, 'replicas');
}, 60_000);

async function jobTotal(node: ServiceProcess, signal?: AbortSignal): Promise<number> {
  const response = await fetch(`${node.baseUrl}/api/jobs?limit=1`, { headers: { cookie }, signal });
  expect(response.status).toBe(200);
  return ((await response.json()) as { pagination: { total: number } }).pagination.total;
}

test('read-your-writes through a standby: every event ingested through it is in the next read through it', async () => {
  for (let round = 1; round <= 30; round++) {
    const written = await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, `ryw-${round}`, 1));
    expect(written.status).toBe(200);
    expect({ round, total: await jobTotal(b) }).toEqual({ round, total: round });
  }
  expect(b.output).toMatch(/replica caught up at log seq \d+: answering reads here, forwarding writes/);
  expect(b.output).not.toMatch(/the replica had not applied log seq/);
  const answer = await health(b.baseUrl);
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({ status: 'ok', role: 'standby', node: 'node-b', owner: 'node-o', replica: { following: true, lag: 0 } });
  expect([...Value.Errors(Health, answer.body)].map((error) => `${error.path}: ${error.message}`)).toEqual([]); // as documented
}, 60_000);

test('reads through a standby are answered by its replica: with the owner stopped they still answer at once, with the current data', async () => {
  const total = await jobTotal(o);
  o.proc.kill('SIGSTOP');
  try {
    const sentAtMs = performance.now();
    expect(await jobTotal(a, AbortSignal.timeout(1_000))).toBe(total);
    const me = await getJson(a.baseUrl, '/api/auth/me', cookie);
    expect(me.status).toBe(200);
    expect(JSON.stringify(me.body)).toContain(connection.id);
    expect(performance.now() - sentAtMs).toBeLessThan(1_000); // well inside the lease: O is still the owner
  } finally {
    o.proc.kill('SIGCONT');
  }
}, 30_000);

test('a live stream on a standby receives events ingested through another node and keeps going across a kill -9 of the owner', async () => {
  const closing = new AbortController();
  const stream = await fetch(`${a.baseUrl}/api/events/stream?connectionId=${connection.id}`, { headers: { cookie }, signal: closing.signal });
  expect(stream.status).toBe(200);
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const readUntil = async (needle: string, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!text.includes(needle)) {
      if (Date.now() > deadline) throw new Error(`the stream on A did not show ${needle}; got:\n${text.slice(-2000)}`);
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`the stream on A ended before ${needle}; got:\n${text.slice(-2000)}`);
      text += decoder.decode(chunk.value, { stream: true });
    }
  };
  expect((await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'before-kill', 1))).status).toBe(200);
  await readUntil('before-kill-0', 15_000);

  await o.kill();
  const owner = await waitForOwner([a.baseUrl, b.baseUrl]);
  // through B whichever node owns now (B forwards to A, or writes itself); retried like an SDK while the lease moves
  for (;;) {
    const answer = await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'after-kill', 1)).catch(() => ({ status: 0 }));
    if (answer.status === 200) break;
    expect([0, 503]).toContain(answer.status);
    await Bun.sleep(100);
  }
  await readUntil('after-kill-0', 15_000);
  closing.abort();
  // a standby stops cleanly (it stops following and waiting for the lease; nothing to snapshot)
  const standby = owner === 0 ? b : a;
  expect(await standby.stop()).toBe(0);
  expect(standby.output).not.toMatch(/FATAL/);
  console.log(`stream on node-a kept going across kill -9 of node-o; the new owner is ${owner === 0 ? 'node-a' : 'node-b'}`);
}, 60_000);
