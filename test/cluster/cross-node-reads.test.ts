/**
 * A node answers for connections it does not answer itself exactly as one node holding
 * everything would (docs/cluster.md, "Reads across nodes"): four nodes on a 3-server NATS
 * cluster, three of them with CLUSTER_READS_FROM=writers (each answers from its own memory
 * only the partitions it writes and asks the writers for the rest, so every read over several
 * connections is split across nodes and merged) and a reference node with the default, which
 * keeps every partition and answers every read from its own memory. The same reads through
 * each of the three and through the reference are compared whole: every sort of the job list
 * walked to its end by cursor, with filters (payload searches among them), totals, queues,
 * workers, the alerts overview, alert rules, the audit log, task metrics, markers, a job's
 * detail; for two users. Then writes by id through a node that does not write the job's
 * partition: written once, by its writer.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { partitionOf } from '../../actors/partition-of.ts';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, startService, type Connection, type ServiceProcess } from '../blackbox/service-process.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { health, nodeEnv, tearDownAfterAll, waitForAssignment } from './cluster-harness.ts';

const PARTITIONS = 8;
const STATES = ['queued', 'active', 'completed', 'failed', 'retrying', 'cancelled'];
const QUEUES = ['default', 'mail', 'reports'];
const NAMES = ['tasks.add', 'tasks.send_email', 'reports.daily'];

const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let reference: ServiceProcess;
let nodes: ServiceProcess[] = [];
const cookies: Record<'admin' | 'other', string> = { admin: '', other: '' };
const owned: Record<'admin' | 'other', Connection[]> = { admin: [], other: [] };
let jobIds: string[] = [];
tearDownAfterAll(dirs, () => nats);

async function call(baseUrl: string, method: string, path: string, cookie: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? null : JSON.parse(text) };
}

beforeAll(async () => {
  nats = await startNatsCluster();
  const start = (name: string, extra: Record<string, string>) => {
    const dataDir = makeDataDir(`cross-reads-${name}`);
    dirs.push(dataDir);
    return startService({ dataDir, env: nodeEnv(nats!.url, name, { CLUSTER_PARTITIONS: String(PARTITIONS), BODY_TIMEOUT_SECONDS: '5', ...extra }) });
  };
  [reference, ...nodes] = await Promise.all([start('ref', {}), ...['node-a', 'node-b', 'node-c'].map((name) => start(name, { CLUSTER_READS_FROM: 'writers' }))]);
  await waitForAssignment([reference.baseUrl, ...nodes.map((node) => node.baseUrl)], { partitions: PARTITIONS });
  cookies.admin = await login(nodes[0]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  // a second user with a team of their own
  expect((await call(nodes[1]!.baseUrl, 'POST', '/api/users', cookies.admin, { email: 'other@example.test', password: 'another long password' })).status).toBe(201);
  const team = await call(nodes[1]!.baseUrl, 'POST', '/api/teams', cookies.admin, { name: 'other' });
  expect((await call(nodes[2]!.baseUrl, 'POST', `/api/teams/${team.json.team.id}/members`, cookies.admin, { email: 'other@example.test', role: 'admin' })).status).toBe(201);
  cookies.other = await login(nodes[2]!.baseUrl, 'other@example.test', 'another long password');
  // connections until each user's are on several partitions
  for (const [user, count, spread] of [['admin', 6, 4], ['other', 3, 2]] as const) {
    while (owned[user].length < count || new Set(owned[user].map((one) => partitionOf(one.id, PARTITIONS))).size < spread) {
      owned[user].push(await createConnection(nodes[owned[user].length % 3]!.baseUrl, cookies[user], `${user}-${owned[user].length}`));
    }
  }
  const nowMs = Date.now();
  const random = new SeededRandom(20261127);
  const next = (n: number) => random.int(n);
  for (const [i, connection] of [...owned.admin, ...owned.other].entries()) {
    const events: unknown[] = [];
    for (let j = 0; j < 12 + next(10); j++) {
      const state = STATES[next(STATES.length)]!;
      // whole seconds: ties across connections are broken by id, as one engine does
      const createdAt = new Date(Math.floor(nowMs / 1000) * 1000 - 1000 * next(300)).toISOString();
      const job: Record<string, unknown> = { externalId: `j-${j}`, name: NAMES[next(NAMES.length)], queue: QUEUES[next(QUEUES.length)], state, createdAt, workerId: `w${next(3)}` };
      if (j % 3 !== 0) job.args = { kwargs: { userId: j % 5 }, args: [`order-${(i + j) % 4}`] };
      if (state !== 'queued') job.startedAt = createdAt;
      if (state === 'completed' || state === 'failed') job.finishedAt = new Date(Date.parse(createdAt) + 1000 * next(20)).toISOString();
      events.push(jobEvent(connection.id, nowMs, job, { framework: i % 2 === 0 ? 'celery' : 'bullmq' }));
    }
    for (let w = 0; w < 3; w++) events.push(workerEvent(connection.id, nowMs, { externalId: `w${w}`, hostname: `w${w}.host` }));
    for (const queue of QUEUES) events.push(queueEvent(connection.id, nowMs, { name: queue, depth: next(40) }));
    const answer = await ingest(nodes[i % 3]!.baseUrl, connection.apiKey, events);
    expect(answer.status).toBe(200);
    expect(answer.body.accepted).toBe(events.length);
  }
  for (const [i, connection] of owned.admin.entries()) {
    if (i % 2 !== 0) continue;
    expect((await call(nodes[i % 3]!.baseUrl, 'POST', '/api/alert-rules', cookies.admin, { connectionId: connection.id, name: `failures ${i}`, kind: 'failure_rate', threshold: 0.01, windowSeconds: 3600, channelIds: [] })).status).toBe(201);
    expect((await call(nodes[(i + 1) % 3]!.baseUrl, 'POST', '/api/markers', cookies.admin, { connectionId: connection.id, name: `deploy ${i}` })).status).toBeLessThan(300);
  }
  // every node has applied everything: the reference's total of the admin's jobs, then each node's log position
  await waitForReplicas();
  const listed = await call(reference.baseUrl, 'GET', '/api/jobs?limit=100&sortBy=createdAt&sortOrder=asc', cookies.admin);
  jobIds = (listed.json.data as Array<{ id: string }>).map((job) => job.id);
}, 120_000);

/** Until every node applied the last log message any of them knows of. */
async function waitForReplicas(): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const states = await Promise.all([reference, ...nodes].map((node) => health(node.baseUrl)));
    const last = Math.max(...states.map((state) => state.body.replica?.lastKnownSeq ?? 0));
    if (states.every((state) => state.body.replica?.appliedSeq === last)) return;
    if (Date.now() > deadline) throw new Error(`replicas did not converge: ${JSON.stringify(states.map((state) => state.body.replica))}`);
    await Bun.sleep(50);
  }
}

/**
 * The same read through `node` and through the reference: the same status and body. Reads
 * whose answer follows the clock (task metrics, a worker's age) are read again once when they
 * differ, in case a second boundary passed between the two.
 */
async function same(node: ServiceProcess, path: string, user: 'admin' | 'other' = 'admin'): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    const [one, many] = await Promise.all([call(reference.baseUrl, 'GET', path, cookies[user]), call(node.baseUrl, 'GET', path, cookies[user])]);
    const equal = Bun.deepEquals(one, many);
    if (equal || attempt === 1) {
      expect({ path, user, ...many }).toEqual({ path, user, ...one });
      return one.json;
    }
  }
}

async function walk(node: ServiceProcess, query: string, user: 'admin' | 'other'): Promise<number> {
  let cursor: string | null = null;
  let items = 0;
  for (let page = 0; page < 500; page++) {
    const body = await same(node, `/api/jobs?${query}&limit=9${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, user);
    items += body.data.length;
    cursor = body.pagination.nextCursor;
    if (cursor === null) return items;
  }
  throw new Error(`${query}: more than 500 pages`);
}

describe('reads through nodes that answer only the partitions they write equal one node holding everything', () => {
  test('the partitions are spread: each of the three writes some, and each user has connections written by several nodes', async () => {
    const writes = await Promise.all(nodes.map(async (node) => (await health(node.baseUrl)).body.writes ?? []));
    for (const keys of writes) expect(keys.some((key) => key.startsWith('p.'))).toBe(true);
    const writerOf = (id: string) => writes.findIndex((keys) => keys.includes(`p.${partitionOf(id, PARTITIONS)}`));
    expect(new Set(owned.admin.map((one) => writerOf(one.id)).filter((at) => at >= 0)).size).toBeGreaterThanOrEqual(2);
    expect(jobIds.length).toBeGreaterThan(50);
  });

  test('jobs: every sort key in both orders, walked to the end by cursor through each node; filters and payload searches', async () => {
    for (const [at, node] of nodes.entries()) {
      for (const user of ['admin', 'other'] as const) {
        for (const sortBy of JOB_SORT_KEYS) {
          for (const sortOrder of ['asc', 'desc']) {
            // every sort through the first node; through the others, two of them
            if (at > 0 && sortBy !== 'createdAt' && sortBy !== 'name') continue;
            expect(await walk(node, `sortBy=${sortBy}&sortOrder=${sortOrder}`, user)).toBeGreaterThan(20);
          }
        }
      }
      for (const filter of ['state=failed', 'queue=mail', 'worker=w2', 'framework=bullmq', 'search=send', `connectionId=${owned.admin[1]!.id}`, 'args=order-3', 'kwargs.userId=4', 'state=completed&queue=default']) {
        await walk(node, `${filter}&sortBy=createdAt&sortOrder=desc`, 'admin');
      }
    }
  }, 300_000);

  test('totals, queues, workers, connections, the user, alerts, alert rules, markers, task metrics, the audit log', async () => {
    for (const node of nodes) {
      for (const user of ['admin', 'other'] as const) {
        for (const sortBy of ['name', 'depth']) for (let page = 1; page <= 4; page++) await same(node, `/api/queues?sortBy=${sortBy}&sortOrder=desc&limit=4&page=${page}`, user);
        for (const sortBy of ['hostname', 'activeJobs']) for (let page = 1; page <= 3; page++) await same(node, `/api/workers?sortBy=${sortBy}&sortOrder=asc&limit=4&page=${page}`, user);
        await same(node, '/api/connections', user);
        await same(node, '/api/auth/me', user);
        await same(node, '/api/alerts', user);
        await same(node, '/api/alert-rules', user);
        await same(node, '/api/markers', user);
        expect((await same(node, '/api/metrics/tasks', user)).data.length).toBeGreaterThan(0);
        await same(node, '/api/metrics/tasks?sortBy=failureRate&sortOrder=desc&spark=failures', user);
        await same(node, '/api/metrics/series?measure=counts&step=1m', user);
        await same(node, '/api/metrics/series?measure=latency&task=tasks.add&step=5m', user);
        await same(node, '/api/capabilities', user);
        await same(node, '/api/alert-channels', user);
        await same(node, '/api/audit?limit=20', user);
      }
    }
  }, 120_000);

  test('a job by id through each node: its detail from the node writing it; another user\'s and an unknown one are 404', async () => {
    for (const node of nodes) {
      for (const id of jobIds.slice(0, 12)) {
        const detail = await same(node, `/api/jobs/${id}`);
        expect(detail.id).toBe(id);
      }
      await same(node, `/api/jobs/${jobIds[0]}`, 'other');
      await same(node, '/api/jobs/no-such-job');
      await same(node, `/api/jobs/${jobIds[1]}/workflow`);
      for (const queue of (await call(reference.baseUrl, 'GET', '/api/queues?limit=20', cookies.admin)).json.data.slice(0, 6) as Array<{ id: string }>) {
        expect((await same(node, `/api/queues/${encodeURIComponent(queue.id)}`)).id).toBe(queue.id);
      }
    }
  });

  test('a retry by id and a bulk retry through nodes that do not write the jobs: located by the keepers, each written once, by its writer', async () => {
    const writes = await Promise.all(nodes.map(async (node) => (await health(node.baseUrl)).body.writes ?? []));
    const writerOf = (connectionId: string) => writes.findIndex((keys) => keys.includes(`p.${partitionOf(connectionId, PARTITIONS)}`));
    const jobs = (await call(reference.baseUrl, 'GET', '/api/jobs?limit=100&state=failed', cookies.admin)).json.data as Array<{ id: string; connectionId: string }>;
    // a job whose writer is not the writer of the user's first partition (where a write nobody located would go)
    const firstPartition = Math.min(...owned.admin.map((one) => partitionOf(one.id, PARTITIONS)));
    const firstWriter = writes.findIndex((keys) => keys.includes(`p.${firstPartition}`));
    const first = jobs.find((job) => writerOf(job.connectionId) >= 0 && writerOf(job.connectionId) !== firstWriter)!;
    const through = nodes.find((_, at) => at !== writerOf(first.connectionId))!;
    const retried = await call(through.baseUrl, 'POST', `/api/jobs/${first.id}/retry`, cookies.admin);
    expect(retried.status).toBeLessThan(300);
    const bulk = jobs.filter((job) => job !== first).slice(0, 10);
    expect(new Set(bulk.map((job) => writerOf(job.connectionId))).size).toBeGreaterThanOrEqual(2);
    const bulkThrough = nodes.find((_, at) => at !== writerOf(bulk[0]!.connectionId))!;
    const answer = await call(bulkThrough.baseUrl, 'POST', '/api/jobs/bulk/retry', cookies.admin, { ids: [...bulk.map((job) => job.id), 'no-such-job'] });
    expect(answer.status).toBe(200);
    expect(answer.json.results.map((result: { id: string; success: boolean }) => [result.id, result.success])).toEqual([...bulk.map((job) => [job.id, true]), ['no-such-job', false]]);
    await waitForReplicas();
    // each job's command once, read alike through every node
    for (const job of [first, ...bulk]) {
      const detail = await same(nodes[0]!, `/api/jobs/${job.id}`);
      expect(detail.lastCommand?.type).toBe('retry');
      for (const node of nodes.slice(1)) await same(node, `/api/jobs/${job.id}`);
    }
    const audit = await same(nodes[0]!, '/api/audit?limit=100');
    expect((audit.data as unknown[]).filter((entry) => JSON.stringify(entry).includes(first.id)).length).toBe(1);
  });
});

/** Reads a live stream until `seen` finds what it waits for in the text so far; the text read. */
async function streamUntil(response: Response, seen: (text: string) => boolean, timeoutMs: number): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (!seen(text) && Date.now() < deadline) {
      const next = await Promise.race([reader.read(), Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null)]);
      if (next === null || next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    return text;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

test('the live stream through a node carries the events of connections it does not answer, relayed by their writer, each connection in order', async () => {
  const writes = await Promise.all(nodes.map(async (node) => (await health(node.baseUrl)).body.writes ?? []));
  // a node and one of the admin's connections whose partition another node writes
  const at = nodes.findIndex((_, index) => owned.admin.some((one) => !writes[index]!.includes(`p.${partitionOf(one.id, PARTITIONS)}`)));
  const watcher = nodes[at]!;
  const elsewhere = owned.admin.find((one) => !writes[at]!.includes(`p.${partitionOf(one.id, PARTITIONS)}`))!;
  const stream = await fetch(`${watcher.baseUrl}/api/events/stream`, { headers: { cookie: cookies.admin } });
  expect(stream.status).toBe(200);
  const names = Array.from({ length: 5 }, (_, n) => `live-${n}`);
  const sender = nodes[(at + 1) % 3]!;
  for (const name of names) {
    expect((await ingest(sender.baseUrl, elsewhere.apiKey, [jobEvent(elsewhere.id, Date.now(), { externalId: name, name: 'tasks.live', state: 'queued' })])).status).toBe(200);
  }
  const text = await streamUntil(stream, (so) => so.includes('"live-4"'), 15_000);
  const order = names.map((name) => text.indexOf(`"${name}"`));
  expect(order.every((position) => position >= 0)).toBe(true);
  expect([...order].sort((x, y) => x - y)).toEqual(order);
}, 30_000);

test('a relayed stream goes on across a kill -9 of the node relaying it: another node keeping the connection relays, and a resume from before the gap resets', async () => {
  const writes = await Promise.all(nodes.map(async (node) => (await health(node.baseUrl)).body.writes ?? []));
  const writerOf = (id: string) => writes.findIndex((keys) => keys.includes(`p.${partitionOf(id, PARTITIONS)}`));
  const connection = owned.admin.find((one) => writerOf(one.id) >= 0)!;
  const writer = writerOf(connection.id);
  const watcher = nodes[(writer + 1) % 3]!;
  const sender = nodes[(writer + 2) % 3]!;
  const stream = await fetch(`${watcher.baseUrl}/api/events/stream?connectionId=${connection.id}`, { headers: { cookie: cookies.admin } });
  expect(stream.status).toBe(200);
  const send = (name: string) => ingest(sender.baseUrl, connection.apiKey, [jobEvent(connection.id, Date.now(), { externalId: name, name: 'tasks.live', state: 'queued' })]);
  expect((await send('before-kill')).status).toBe(200);
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  // a read that outlasts a wait is kept for the next wait: a second read would take the chunk it was waiting for
  let reading: ReturnType<typeof reader.read> | undefined;
  const readUntil = async (needle: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!text.includes(needle) && Date.now() < deadline) {
      reading ??= reader.read();
      const next = await Promise.race([reading, Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null)]);
      if (next === null) break;
      reading = undefined;
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    return text.includes(needle);
  };
  expect(await readUntil('"before-kill"', 10_000)).toBe(true);
  await nodes[writer]!.kill();
  // as an SDK does: retried until the partition's next writer acknowledges it
  const deadline = Date.now() + 30_000;
  while ((await send('after-kill-0').catch(() => ({ status: 0 }))).status !== 200 && Date.now() < deadline) await Bun.sleep(200);
  // an event built before the next relay reached its keeper is behind the gap (the reset below says so):
  // the stream goes on with the events after it
  for (let n = 1; !(await readUntil('"after-kill-', 1_000)) && Date.now() < deadline + 20_000; n++) await send(`after-kill-${n}`).catch(() => undefined);
  expect(text).toContain('"after-kill-');
  await reader.cancel().catch(() => undefined);
  nodes.splice(writer, 1);
  // what the killed node had not sent is unknown: a client resuming from before the kill is told to reset
  const before = text.split('\n\n').find((message) => message.includes('"before-kill"'))!;
  const lastEventId = /^id: (.+)$/m.exec(before)![1]!;
  const resumed = await fetch(`${watcher.baseUrl}/api/events/stream?connectionId=${connection.id}`, { headers: { cookie: cookies.admin, 'last-event-id': lastEventId } });
  expect(await streamUntil(resumed, (so) => so.includes('event: reset'), 5_000)).toContain('event: reset');
}, 60_000);

test('a read whose partition\'s writer stops answering (SIGSTOP) is answered 503 with Retry-After within the body deadline, never a hang', async () => {
  const writes = await Promise.all(nodes.map(async (node) => (await health(node.baseUrl)).body.writes ?? []));
  // a connection whose partition one of the nodes left writes (the reference writes some too)
  const writerOf = (id: string) => writes.findIndex((keys) => keys.includes(`p.${partitionOf(id, PARTITIONS)}`));
  const connection = [...owned.other, ...owned.admin].find((one) => writerOf(one.id) >= 0)!;
  const user = owned.other.includes(connection) ? 'other' : 'admin';
  const writer = writerOf(connection.id);
  const asked = nodes[(writer + 1) % nodes.length]!;
  nodes[writer]!.proc.kill('SIGSTOP');
  try {
    const startedAtMs = Date.now();
    const answer = await fetch(`${asked.baseUrl}/api/jobs?connectionId=${connection.id}`, { headers: { cookie: cookies[user] }, signal: AbortSignal.timeout(15_000) });
    const tookMs = Date.now() - startedAtMs;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
    // BODY_TIMEOUT_SECONDS is 5: the wait for the keeper's answer, and a margin
    expect(tookMs).toBeLessThan(8_000);
  } finally {
    nodes[writer]!.proc.kill('SIGCONT');
  }
}, 30_000);
