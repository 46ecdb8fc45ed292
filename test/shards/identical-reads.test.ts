/**
 * Reads across shards give the answer one engine gives: the same events go to an app with
 * one engine and to one with 4 shards (its records, with the ids the first made, are
 * committed to the second, each to the front or the shard that keeps its connection), and
 * every read over several connections is compared whole: every sort key in both orders with
 * and without filters, walked to its end by cursor; queues and workers page by page in every
 * sort; connections, the user, alert rules, channels and the overview; job details and
 * actions; each for two users. The connections are spread over every shard, so each merge
 * (shard-merge.ts) is what answers.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { FRAMEWORKS, JOB_STATES } from '../../actors/ingest/states.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { shardOf } from '../../src/shards/shard-runtime.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { recordingLog } from '../support/recording-log.ts';
import { shardedTestApp } from '../support/sharded-test-app.ts';
import { ADMIN, singleTestApp, T0, type TestApp } from '../support/test-app.ts';

const SHARDS = 4;
const SEED = Number(process.env.SHARDS_SEED ?? 20261127);
const STATES = JOB_STATES.filter((state) => state !== 'unknown');
const QUEUES = ['default', 'mail', 'reports', 'slow'];
const NAMES = ['tasks.add', 'tasks.send_email', 'tasks.render', 'reports.daily'];
const WORKERS = ['w1', 'w2', 'w3'];

let single: TestApp;
let sharded: TestApp;
const cookies: Record<'admin' | 'other', string> = { admin: '', other: '' };
const connectionIds: string[] = [];
const owned: Record<'admin' | 'other', string[]> = { admin: [], other: [] };
const jobIds: string[] = [];

beforeAll(async () => {
  const log = recordingLog();
  single = await singleTestApp({ log, limits: { dailyEventLimit: 0 } });
  const random = new SeededRandom(SEED);
  cookies.admin = await single.login();
  cookies.other = await single.createUser(cookies.admin, 'other@example.com');
  const keys: string[] = [];
  // ids are random: connections are made until each user's are on several shards (9 and 3 at least)
  for (const [user, count, shards] of [['admin', 9, 3], ['other', 3, 2]] as const) {
    const mine: string[] = [];
    while (mine.length < count || new Set(mine.map((id) => shardOf(id, SHARDS))).size < shards) {
      const created = await single.createConnection(cookies[user], `${user}-${mine.length}`);
      mine.push(created.id);
      connectionIds.push(created.id);
      keys.push(created.apiKey);
    }
    owned[user] = mine;
  }
  for (let round = 0; round < 6; round++) {
    for (const [i, id] of connectionIds.entries()) {
      const atMs = single.clock.nowMs();
      const framework = FRAMEWORKS[i % FRAMEWORKS.length]!;
      const events: unknown[] = [];
      for (let j = 0; j < 6 + random.int(10); j++) {
        const state = STATES[random.int(STATES.length)]!;
        // equal times across connections (whole seconds) so ties are broken by id, as one engine does
        const createdAt = new Date(T0 - 1_000 * random.int(400)).toISOString();
        const job: Record<string, unknown> = {
          externalId: `j${round}-${j}-${random.int(4)}`,
          name: NAMES[random.int(NAMES.length)],
          queue: random.chance(0.1) ? null : QUEUES[random.int(QUEUES.length)],
          state,
          createdAt,
          workerId: random.chance(0.3) ? null : WORKERS[random.int(WORKERS.length)],
        };
        if (state !== 'queued' && state !== 'scheduled') job.startedAt = createdAt;
        if (state === 'completed' || state === 'failed') job.finishedAt = new Date(Date.parse(createdAt) + 1_000 * random.int(30)).toISOString();
        events.push(jobEvent(id, atMs, job, { framework }));
      }
      for (const worker of WORKERS.slice(0, 1 + random.int(3))) events.push(workerEvent(id, atMs, { externalId: worker, hostname: `${worker}.host` }));
      for (const queue of QUEUES.slice(0, 1 + random.int(4))) events.push(queueEvent(id, atMs, { name: queue, depth: random.int(50) }));
      const answer = await single.ingest(keys[i]!, events.map((event) => ({ ...(event as object), framework })));
      expect(answer.status).toBe(200);
    }
    single.clock.advance(2_000 + random.int(60_000));
  }
  // the first and last items of some orders all on one shard, pages past what the others hold: the merge must
  // see that shard's own next cursor to know more follows
  const lone = owned.admin[0]!;
  const loneJobs = Array.from({ length: 20 }, (_, j) => jobEvent(lone, single.clock.nowMs(), { externalId: `lone-${j}`, name: 'zzz.last', createdAt: new Date(T0 - 500_000 - j).toISOString() }));
  expect((await single.ingest(keys[connectionIds.indexOf(lone)]!, loneJobs)).status).toBe(200);
  // alert rules and a channel on some connections, some of them firing
  for (const [i, id] of connectionIds.entries()) {
    if (i % 3 !== 0) continue;
    const cookie = owned.admin.includes(id) ? cookies.admin : cookies.other;
    await single.request('POST', '/api/alert-channels', { body: { connectionId: id, name: `ops ${i}`, url: 'http://hooks.example.com/jobwatch', format: 'json' }, headers: { cookie } });
    await single.request('POST', '/api/alert-rules', { body: { connectionId: id, name: `failures ${i}`, kind: 'failure_rate', threshold: 0.01, windowSeconds: 3600, channelIds: [] }, headers: { cookie } });
  }
  single.clock.advance(11_000);
  await single.alerts.evaluate(connectionIds);
  // commands for agents: a revoke and a retry on jobs of several connections
  const listed = (await single.request('GET', '/api/jobs?limit=100&state=failed', { headers: { cookie: cookies.admin } })).json.data as Array<{ id: string }>;
  const retried = await single.request('POST', '/api/jobs/bulk/retry', { body: { ids: listed.slice(0, 20).map((job) => job.id) }, headers: { cookie: cookies.admin } });
  expect(retried.status).toBe(200);

  sharded = (await shardedTestApp({ nowMs: single.clock.nowMs(), withAdmin: false, limits: { dailyEventLimit: 0 } }, SHARDS)) as unknown as TestApp;
  for (const record of log.records) await sharded.engine.commit(structuredClone(record));
  for (const page of (await single.request('GET', '/api/jobs?limit=100', { headers: { cookie: cookies.admin } })).json.data as Array<{ id: string }>) jobIds.push(page.id);
}, 120_000);

/**
 * Commands made by each app on its own (the bulk action below) get ids of their own: the
 * same command, by every other field, once its id is set aside.
 */
let commandIdsDiffer = false;
const withoutCommandIds = (text: string): unknown => JSON.parse(text.replace(/("lastCommand":\{[^{}]*?"id":)"[^"]*"/g, '$1"(made by each app)"'));

/** The same request to both apps: the same status and the same body, byte for byte once parsed. */
async function same(path: string, user: 'admin' | 'other' = 'admin', init: { method?: string; body?: unknown } = {}): Promise<any> {
  const method = init.method ?? 'GET';
  const one = await single.request(method, path, { headers: { cookie: cookies[user] }, body: init.body });
  const many = await sharded.request(method, path, { headers: { cookie: cookies[user] }, body: init.body });
  const body = (answer: { json: unknown; text: string }) => (commandIdsDiffer ? withoutCommandIds(answer.text) : answer.json);
  expect({ path, user, status: many.status, body: body(many) }).toEqual({ path, user, status: one.status, body: body(one) });
  return one.json;
}

/** Every page of a cursor walk, compared page by page; returns how many items it had. */
async function walk(query: string, user: 'admin' | 'other'): Promise<number> {
  let cursor: string | null = null;
  let items = 0;
  for (let page = 0; page < 1_000; page++) {
    const body = await same(`/api/jobs?${query}&limit=7${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, user);
    items += body.data.length;
    cursor = body.pagination.nextCursor;
    if (cursor === null) return items;
  }
  throw new Error(`${query}: more than 1,000 pages`);
}

describe(`reads over ${SHARDS} shards equal one engine's (seed ${SEED})`, () => {
  test('the data is spread: each user has connections on several shards, each with jobs', () => {
    expect(new Set(owned.admin.map((id) => shardOf(id, SHARDS))).size).toBeGreaterThanOrEqual(3);
    expect(new Set(owned.other.map((id) => shardOf(id, SHARDS))).size).toBeGreaterThanOrEqual(2);
    for (const id of connectionIds) expect(sharded.engine.connection(id)!.jobs.size).toBe(single.engine.connection(id)!.jobs.size);
  });

  test('jobs: every sort key, both orders, walked to the end by cursor, without and with filters', async () => {
    for (const user of ['admin', 'other'] as const) {
      for (const sortBy of JOB_SORT_KEYS) {
        for (const sortOrder of ['asc', 'desc']) {
          const all = await walk(`sortBy=${sortBy}&sortOrder=${sortOrder}`, user);
          expect(all).toBeGreaterThan(50);
        }
      }
    }
    const filters = ['state=failed', 'state=queued', 'queue=mail', 'worker=w2', 'framework=bullmq', 'search=send', `connectionId=${owned.admin[4]}`, `connectionId=${owned.other[1]}`, 'state=completed&queue=default'];
    for (const filter of filters) {
      for (const sortBy of ['createdAt', 'durationMs', 'name'] as const) await walk(`${filter}&sortBy=${sortBy}&sortOrder=desc`, 'admin');
    }
  }, 120_000);

  test('a cursor of one page resumes the same on both, and a cursor of another sort is refused alike', async () => {
    const first = await same('/api/jobs?limit=5&sortBy=name&sortOrder=asc');
    await same(`/api/jobs?limit=5&sortBy=name&sortOrder=asc&cursor=${encodeURIComponent(first.pagination.nextCursor)}`);
    await same(`/api/jobs?limit=5&sortBy=state&sortOrder=asc&cursor=${encodeURIComponent(first.pagination.nextCursor)}`);
    await same('/api/jobs?limit=5&cursor=not-a-cursor');
  });

  test('queues and workers: every sort, both orders, page by page', async () => {
    for (const user of ['admin', 'other'] as const) {
      for (const sortBy of ['name', 'depth', 'consumers', 'throughput', 'failureRate']) {
        for (const sortOrder of ['asc', 'desc']) {
          for (let page = 1; page <= 12; page++) await same(`/api/queues?sortBy=${sortBy}&sortOrder=${sortOrder}&limit=3&page=${page}`, user);
        }
      }
      for (const sortBy of ['hostname', 'state', 'activeJobs', 'lastHeartbeat', 'taskRate']) {
        for (const sortOrder of ['asc', 'desc']) {
          for (let page = 1; page <= 10; page++) await same(`/api/workers?sortBy=${sortBy}&sortOrder=${sortOrder}&limit=3&page=${page}`, user);
        }
      }
      await same('/api/queues?framework=sidekiq&limit=5', user);
      await same('/api/workers?state=online&limit=5', user);
      await same(`/api/queues?connectionId=${connectionIds[2]}`, user);
    }
  }, 120_000);

  test('connections, the user, alert rules and channels, the alerts overview', async () => {
    for (const user of ['admin', 'other'] as const) {
      const listed = await same('/api/connections', user);
      expect(listed.data.length).toBe(owned[user].length);
      await same('/api/auth/me', user);
      await same('/api/alert-rules', user);
      await same('/api/alert-channels', user);
      const overview = await same('/api/alerts', user);
      expect(overview.firing.length + overview.recent.length).toBeGreaterThan(0);
      await same(`/api/alert-rules?connectionId=${connectionIds[3]}`, user);
    }
  });

  test('a job by id from whichever shard keeps it; another user\'s or an unknown one is 404', async () => {
    for (const id of jobIds.slice(0, 30)) await same(`/api/jobs/${id}`);
    await same(`/api/jobs/${jobIds[0]}`, 'other');
    await same('/api/jobs/no-such-job');
  });

  test('a bulk action over jobs of several shards answers id by id in order, then the lists agree again', async () => {
    const ids = [...jobIds.slice(0, 40), 'no-such-job', jobIds[3]!];
    const body = { ids };
    const one = await single.request('POST', '/api/jobs/bulk/revoke', { body, headers: { cookie: cookies.admin } });
    const many = await sharded.request('POST', '/api/jobs/bulk/revoke', { body, headers: { cookie: cookies.admin } });
    commandIdsDiffer = true;
    expect(many.status).toBe(200);
    expect(many.json).toEqual(one.json);
    expect(one.json.results.filter((result: { success: boolean }) => result.success).length).toBeGreaterThan(5);
    await walk('sortBy=state&sortOrder=asc', 'admin');
    await same(`/api/jobs/${jobIds[3]}/retry`, 'admin', { method: 'POST' });
    await same(`/api/jobs/${jobIds[0]}/revoke`, 'other', { method: 'POST' });
  });
});

test('the admin of the two apps is the same user: the front replicated the accounts to every shard', () => {
  expect(sharded.engine.accounts.userByEmail(ADMIN.email)?.id).toBe(single.engine.accounts.userByEmail(ADMIN.email)!.id);
});
