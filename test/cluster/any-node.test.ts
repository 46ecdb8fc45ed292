/**
 * Any node answers any request (reads from its replica, writes forwarded to their writer):
 * three nodes on one 3-server NATS
 * cluster, each writing some partitions; A writes the accounts partition (the node names
 * are chosen so the placement gives it to A), B and C forward accounts writes to it.
 * The tests run in order on the same nodes:
 *
 * 1. login through B, the session through every node, the writer's body cap on a
 *    forwarded body; the accounts writer's login limiter sees the client address B signed
 *    (B trusts loopback as a proxy, so the address comes from X-Forwarded-For), and a forged
 *    X-Forwarded-For or forward header sent without a valid signature is ignored; the
 *    cross-site guard still holds;
 * 2. a live stream opened on B is served by B's replica (A holds no stream for it) and
 *    receives events ingested through A and through C;
 * 3. 4 writers round-robin over A, B and C; A gets kill -9 mid-run; an accounts write
 *    through B is answered 503 with Retry-After meanwhile; no acknowledged event is lost,
 *    reads through the survivors match;
 * 4. a node whose partition's writer stops answering (SIGSTOP) answers a write 503 with
 *    Retry-After and the envelope within the body deadline, not a hang.
 */
import { beforeAll, expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  ingest,
  makeDataDir,
  startService,
  type Connection,
  type ServiceProcess,
} from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { signForward } from '../../src/http/forward-signature.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { Placement } from '../../cluster/placement.ts';
import { TEST_CLUSTER_SECRET, health, missingJobs, nodeEnv, partitionKeys, startWriters, waitForAssignment, waitForCount, tearDownAfterAll } from './cluster-harness.ts';

const METRICS_TOKEN = 'metrics-token-for-cluster-tests';
/** Short, so a forward to a stopped owner gives up quickly; long enough for small bodies on a busy machine. */
const BODY_TIMEOUT_SECONDS = 3;

// The nodes live across the tests of this file (cleanUpServices would kill them after each).
const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let a: ServiceProcess;
let b: ServiceProcess;
let c: ServiceProcess;
let cookie: string;
let connection: Connection;
tearDownAfterAll(dirs, () => nats);

function env(node: string, extra: Record<string, string> = {}) {
  return nodeEnv(nats!.url, node, { METRICS_TOKEN, BODY_TIMEOUT_SECONDS: String(BODY_TIMEOUT_SECONDS), ...extra });
}

/** Three node names of which the first is the one the placement wants for the accounts partition (its writer, whatever CLUSTER_STANDBYS says). */
function namesWithAccountsFirst(): [string, string, string] {
  const names = ['node-a', 'node-b', 'node-c'];
  const writer = new Placement(partitionKeys(16), 0).writer(names, 'accounts')!;
  const rest = names.filter((name) => name !== writer);
  return [writer, rest[0]!, rest[1]!];
}

beforeAll(async () => {
  nats = await startNatsCluster();
  const [dirA, dirB, dirC] = ['any-node-a', 'any-node-b', 'any-node-c'].map(makeDataDir);
  dirs.push(dirA!, dirB!, dirC!);
  const [nameA, nameB, nameC] = namesWithAccountsFirst();
  [a, b, c] = await Promise.all([
    startService({ dataDir: dirA!, env: env(nameA) }),
    // B stands behind a (loopback) proxy: it believes X-Forwarded-For from 127.0.0.1; A and C
    // do not
    startService({ dataDir: dirB!, env: env(nameB, { TRUSTED_PROXIES: '127.0.0.1' }) }),
    startService({ dataDir: dirC!, env: env(nameC) }),
  ]);
  const writers = await waitForAssignment([a.baseUrl, b.baseUrl, c.baseUrl], { spread: true });
  expect(writers.get('accounts')).toBe(0);
}, 60_000);

function failedLogin(baseUrl: string, email: string, headers: Record<string, string> = {}): Promise<number> {
  return fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password: 'not-the-password' }),
  }).then((response) => response.status);
}

test('login through a node that does not write the accounts: the session works on every node, the limiter sees the signed client address, forged ones are ignored', async () => {
  expect((await health(b.baseUrl)).body.writes).not.toContain('accounts');
  expect((await health(a.baseUrl)).body).toMatchObject({ status: 'ok', role: 'node', writes: expect.arrayContaining(['accounts']) });

  // A same-origin login through B: Host and Origin reach the owner as B received them.
  const viaB = await fetch(`${b.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: b.baseUrl },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  expect(viaB.status).toBe(200);
  cookie = viaB.headers.getSetCookie()[0]!.split(';')[0]!;
  const crossSite = await fetch(`${b.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  expect(crossSite.status).toBe(403);
  connection = await createConnection(c.baseUrl, cookie, 'any-node');
  // read-your-writes through C (its answer waited for C's replica); A writes it; B's replica
  // follows within moments
  for (const node of [c, a, b]) {
    const seenBy = Date.now() + (node === b ? 5_000 : 0);
    for (;;) {
      const answer = await fetch(`${node.baseUrl}/api/connections`, { headers: { cookie } });
      expect(answer.status).toBe(200);
      if (JSON.stringify(await answer.json()).includes(connection.id)) break;
      if (Date.now() >= seenBy) throw new Error(`${node.baseUrl} does not list the connection made through C`);
      await Bun.sleep(50);
    }
  }

  // 5 failures are free per (address, email); the 6th is limited. B signs the address its
  // proxy named, so another address through B is a fresh pair at the owner.
  const victim = 'victim@example.test';
  for (let attempt = 0; attempt < 5; attempt++) expect(await failedLogin(b.baseUrl, victim, { 'x-forwarded-for': '198.51.100.1' })).toBe(401);
  expect(await failedLogin(b.baseUrl, victim, { 'x-forwarded-for': '198.51.100.1' })).toBe(429);
  expect(await failedLogin(b.baseUrl, victim, { 'x-forwarded-for': '198.51.100.2' })).toBe(401);

  // Straight to the owner (no trusted proxy): invented addresses and a forward header signed
  // with the wrong secret change nothing; every attempt is the peer's, so the 6th is limited.
  const other = 'other@example.test';
  for (let attempt = 0; attempt < 5; attempt++) {
    const forged = signForward('not-the-cluster-secret-at-all', 'POST', '/api/auth/login', { address: `203.0.113.${attempt}`, host: 'x', https: false }, Date.now());
    expect(await failedLogin(a.baseUrl, other, { 'x-forwarded-for': `203.0.113.${attempt}`, 'x-jobwatch-forward': forged })).toBe(401);
  }
  expect(await failedLogin(a.baseUrl, other, { 'x-forwarded-for': '203.0.113.99' })).toBe(429);

  // The owner's body cap applies to a forwarded body (streamed, not read whole by the standby).
  const tooLarge = await fetch(`${c.baseUrl}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${connection.apiKey}` },
    body: `{"events":[${'"x",'.repeat(1_600_000)}"x"]}`,
  });
  expect(tooLarge.status).toBe(413);
  expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');

  // A signed forward that reaches a node which does not write its partition is not passed on
  // again (no loops).
  const signed = signForward(TEST_CLUSTER_SECRET, 'POST', '/api/connections', { address: '127.0.0.1', host: 'x', https: false }, Date.now());
  const secondHop = await fetch(`${c.baseUrl}/api/connections`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', 'x-jobwatch-forward': signed },
    body: JSON.stringify({ name: 'second-hop' }),
  });
  expect(secondHop.status).toBe(503);
}, 60_000);

test('a live stream opened on B is served by its replica and receives events ingested through A and through C', async () => {
  const closing = new AbortController();
  const stream = await fetch(`${b.baseUrl}/api/events/stream?connectionId=${connection.id}`, { headers: { cookie }, signal: closing.signal });
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toContain('text/event-stream');
  expect(await openStreamsAt(b)).toBe(1);
  expect(await openStreamsAt(a)).toBe(0);
  expect((await ingest(a.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'through-owner', 1))).status).toBe(200);
  expect((await ingest(c.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'through-standby', 1))).status).toBe(200);
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 15_000;
  while (!(text.includes('through-owner') && text.includes('through-standby'))) {
    if (Date.now() > deadline) throw new Error(`stream on B did not show both events; got:\n${text}`);
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`stream on B ended; got:\n${text}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  closing.abort();
  const closedBy = Date.now() + 10_000;
  while ((await openStreamsAt(b)) !== 0) {
    if (Date.now() > closedBy) throw new Error('B still holds the stream its client closed');
    await Bun.sleep(100);
  }
}, 60_000);

/** A counter or a histogram's `_count` in a node's /metrics (0 when absent). */
async function metricAt(node: ServiceProcess, series: string): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(text.match(new RegExp(`^${series} (\\S+)$`, 'm'))?.[1] ?? 0);
}

test('the node writing a partition reports its JetStream publishes as log group commits in /metrics', async () => {
  const key = `p.${partitionOf(connection.id, 16)}`;
  const nodes = [a, b, c];
  const writers = await Promise.all(nodes.map(async (node) => (await health(node.baseUrl)).body.writes?.includes(key) === true));
  const writer = nodes[writers.indexOf(true)]!;
  const before = await metricAt(writer, 'jobwatch_log_group_commit_records_count');
  expect((await ingest(a.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'metered', 3))).status).toBe(200);
  expect(await metricAt(writer, 'jobwatch_log_group_commit_records_count')).toBeGreaterThan(before);
  expect(await metricAt(writer, 'jobwatch_log_append_duration_seconds_count')).toBeGreaterThan(0);
});

test('4 writers over every node, kill -9 of the accounts writer mid-run: no acknowledged event lost, reads through the survivors match', async () => {
  const nodes = [a, b, c];
  let turn = 0;
  const writers = startWriters({
    writers: 4,
    batchSize: 20,
    apiKey: connection.apiKey,
    connectionId: connection.id,
    // round-robin over the nodes still running
    target: () => {
      const alive = nodes.filter((node) => node.exitCode === null);
      return alive[turn++ % alive.length]!.baseUrl;
    },
  });
  await waitForCount(writers, 600);
  const killedAtMs = performance.now();
  await a.kill();
  // within the lease, B still names A the accounts writer: a write forwarded to it is refused,
  // a 503 to retry
  const meanwhile = await fetch(`${b.baseUrl}/api/connections`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', origin: b.baseUrl },
    body: JSON.stringify({ name: 'during-failover' }),
  });
  expect(meanwhile.status).toBe(503);
  expect(meanwhile.headers.get('retry-after')).toBe('1');
  expect(((await meanwhile.json()) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
  const ackedBeforeKill = writers.acknowledged.size;
  const owner = (await waitForAssignment([b.baseUrl, c.baseUrl])).get('accounts')!;
  const failoverMs = performance.now() - killedAtMs;
  await waitForCount(writers, ackedBeforeKill + 600);
  await writers.stop();
  console.log(
    `any-node failover: ${Math.round(failoverMs)} ms from kill -9 of A to every partition written by B or C (${owner === 0 ? 'B' : 'C'} writes the accounts); ` +
      `${writers.acknowledged.size} events acknowledged over 3 nodes, ${writers.retries} retried batches, longest wait ${Math.round(writers.longestWaitMs)} ms`,
  );
  expect(await missingJobs(b.baseUrl, cookie, writers.acknowledged)).toEqual([]);
  expect(await missingJobs(c.baseUrl, cookie, writers.acknowledged)).toEqual([]);
}, 90_000);

test('a node whose partition writer stops answering says 503 to a write, with Retry-After and the envelope, within the body deadline', async () => {
  const key = `p.${partitionOf(connection.id, 16)}`;
  const [owner, standby] = (await health(b.baseUrl)).body.writes!.includes(key) ? [b, c] : [c, b];
  expect((await health(owner.baseUrl)).body.writes).toContain(key);
  owner.proc.kill('SIGSTOP');
  try {
    const sentAtMs = performance.now();
    const answer = await fetch(`${standby.baseUrl}/api/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${connection.apiKey}` },
      body: JSON.stringify({ events: batchOfJobs(connection.id, 'owner-stopped', 1) }),
      signal: AbortSignal.timeout(30_000),
    });
    const tookMs = performance.now() - sentAtMs;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    const body = (await answer.json()) as { error: { code: string; message: string; docs_url: string } };
    expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.error.docs_url).toContain('SERVICE_UNAVAILABLE');
    expect(tookMs).toBeLessThan(BODY_TIMEOUT_SECONDS * 1000 + 3_000);
  } finally {
    owner.proc.kill('SIGCONT');
  }
}, 60_000);

async function openStreamsAt(node: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const value = /^jobwatch_sse_subscribers (\d+)/m.exec(text)?.[1];
  if (value === undefined) throw new Error(`no jobwatch_sse_subscribers in /metrics of ${node.baseUrl}`);
  return Number(value);
}
