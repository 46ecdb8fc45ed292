/**
 * Task metrics over connections on several shards give the answer one engine gives: the
 * same events (jobs with run and wait times over four days, queue samples, markers, more
 * task series than a connection keeps so some fold into `(other)`) go to an app with one
 * engine and to one with 4 shards, and the task table and the series are compared whole,
 * percentiles included: every sort in both orders, every spark measure, every series
 * measure, filtered by task, queue and connection, over ranges read at each tier, for two
 * users. A task's row adds the histograms of every connection before its percentiles are
 * taken, so this is what shows the shards' parts are added, not their answers.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { TASK_METRICS_DEFAULTS } from '../../actors/metrics/metric-tiers.ts';
import { OTHER_SERIES, SERIES_MEASURES, SPARK_MEASURES } from '../../actors/metrics/task-metrics-query.ts';
import { TASK_SORT_KEYS } from '../../actors/services/task-metrics-answers.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { shardOf } from '../../src/shards/shard-runtime.ts';
import { iso, jobEvent, queueEvent } from '../support/events.ts';
import { recordingLog } from '../support/recording-log.ts';
import { shardedTestApp } from '../support/sharded-test-app.ts';
import { singleTestApp, T0, type TestApp } from '../support/test-app.ts';

const SHARDS = 4;
const SEED = Number(process.env.SHARDS_SEED ?? 20261127);
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const QUEUES = ['default', 'mail', 'reports'];
const NAMES = ['tasks.add', 'tasks.send_email', 'tasks.render', 'reports.daily', 'reports.weekly', 'billing.charge'];
/** fewer series than a busy connection has: its least active fold into `(other)` */
const LIMITS = { dailyEventLimit: 0, taskMetrics: { ...TASK_METRICS_DEFAULTS, seriesMax: 8 } };

let single: TestApp;
let sharded: TestApp;
const cookies: Record<'admin' | 'other', string> = { admin: '', other: '' };
const owned: Record<'admin' | 'other', string[]> = { admin: [], other: [] };

beforeAll(async () => {
  const log = recordingLog();
  single = await singleTestApp({ log, limits: LIMITS });
  const random = new SeededRandom(SEED);
  cookies.admin = await single.login();
  cookies.other = await single.createUser(cookies.admin, 'other@example.com');
  const keys = new Map<string, string>();
  for (const [user, count, shards] of [['admin', 7, 3], ['other', 3, 2]] as const) {
    const mine: string[] = [];
    while (mine.length < count || new Set(mine.map((id) => shardOf(id, SHARDS))).size < shards) {
      const created = await single.createConnection(cookies[user], `${user}-${mine.length}`);
      mine.push(created.id);
      keys.set(created.id, created.apiKey);
    }
    owned[user] = mine;
  }
  for (const [id, key] of keys) {
    const events: unknown[] = [];
    for (let j = 0; j < 60 + random.int(60); j++) {
      // the same whole minutes on every connection, so steps and buckets hold several connections' jobs
      const endMs = T0 - MINUTE_MS * random.int(4 * 24 * 60) - 1_000;
      const runMs = random.int(5) === 0 ? 30_000 + random.int(300_000) : 1 + random.int(2_000);
      const startMs = endMs - runMs;
      const job = { externalId: `j${j}`, name: NAMES[random.int(NAMES.length)], queue: QUEUES[random.int(QUEUES.length)], createdAt: iso(startMs - random.int(60_000)) };
      const state = ['completed', 'completed', 'completed', 'failed', 'cancelled'][random.int(5)];
      events.push(jobEvent(id, startMs, { ...job, state: 'active', startedAt: iso(startMs) }));
      if (random.chance(0.1)) events.push(jobEvent(id, startMs + 1, { ...job, state: 'retrying', startedAt: iso(startMs) }));
      events.push(jobEvent(id, endMs, { ...job, state, startedAt: iso(startMs), completedAt: iso(endMs) }));
    }
    for (const queue of QUEUES) events.push(queueEvent(id, T0, { name: queue, depth: random.int(80) }));
    expect((await single.ingest(key, events)).status).toBe(200);
  }
  // queue depth and age samples, taken by the retention runs
  for (const minutes of [9, 5, 2]) await single.engine.commit({ t: 'retention', atMs: T0 - minutes * MINUTE_MS });
  // markers at the same instant on connections of several shards: one engine lists them in the connections' order
  for (const [at, id] of [...owned.admin, ...owned.other].entries()) {
    const cookie = owned.admin.includes(id) ? cookies.admin : cookies.other;
    const marked = await single.request('POST', '/api/markers', { headers: { cookie }, body: { connectionId: id, name: `deploy ${at}`, at: iso(T0 - (at % 3) * HOUR_MS - 30 * MINUTE_MS) } });
    expect(marked.status).toBe(201);
  }

  sharded = (await shardedTestApp({ nowMs: single.clock.nowMs(), withAdmin: false, limits: LIMITS }, SHARDS)) as unknown as TestApp;
  for (const record of log.records) await sharded.engine.commit(structuredClone(record));
}, 120_000);

/** The same request to both apps: the same status and the same body, once parsed. */
async function same(path: string, user: 'admin' | 'other' = 'admin'): Promise<any> {
  const one = await single.request('GET', path, { headers: { cookie: cookies[user] } });
  const many = await sharded.request('GET', path, { headers: { cookie: cookies[user] } });
  expect({ path, user, status: many.status, body: many.json }).toEqual({ path, user, status: one.status, body: one.json });
  return one.json;
}

const RANGES = ['', `&from=${iso(T0 - 3 * DAY_MS)}&to=${iso(T0)}`, `&from=${iso(T0 - 2 * HOUR_MS)}&to=${iso(T0 - 17 * MINUTE_MS)}`];

describe(`task metrics over ${SHARDS} shards equal one engine's (seed ${SEED})`, () => {
  test('the data is spread: each user has connections on several shards, and some fold tasks into (other)', async () => {
    expect(new Set(owned.admin.map((id) => shardOf(id, SHARDS))).size).toBeGreaterThanOrEqual(3);
    expect(new Set(owned.other.map((id) => shardOf(id, SHARDS))).size).toBeGreaterThanOrEqual(2);
    const table = await same(`/api/metrics/tasks?from=${iso(T0 - 4 * DAY_MS)}&to=${iso(T0)}`);
    expect(table.foldedSeries).toBeGreaterThan(0);
    expect(table.data.map((row: { task: string }) => row.task)).toContain(OTHER_SERIES);
  });

  test('the task table: every sort in both orders, every spark measure, over ranges read at each tier, for two users', async () => {
    let percentiles = 0;
    for (const user of ['admin', 'other'] as const) {
      for (const range of RANGES) {
        for (const sortBy of TASK_SORT_KEYS) {
          for (const sortOrder of ['asc', 'desc']) {
            const table = await same(`/api/metrics/tasks?sortBy=${sortBy}&sortOrder=${sortOrder}${range}`, user);
            percentiles += table.data.filter((row: { current: { runTime: { p95: number | null } } }) => row.current.runTime.p95 !== null).length;
          }
        }
        for (const spark of SPARK_MEASURES) await same(`/api/metrics/tasks?spark=${spark}&sortBy=runP99&sortOrder=desc${range}`, user);
      }
    }
    expect(percentiles).toBeGreaterThan(100);
  }, 120_000);

  test('the task table filtered by queue and by connection', async () => {
    for (const queue of [...QUEUES, 'no-such-queue']) await same(`/api/metrics/tasks?queue=${queue}&sortBy=waitP95&sortOrder=desc&spark=waitP95${RANGES[1]}`);
    for (const id of [owned.admin[1]!, owned.admin[4]!]) await same(`/api/metrics/tasks?connectionId=${id}&sortBy=failureRate${RANGES[1]}`);
    await same(`/api/metrics/tasks?connectionId=${owned.admin[0]}`, 'other');
  });

  test('series: every measure of every task, of a task in a queue, of a queue and of every task, at several steps, with the markers', async () => {
    const tasks = [...NAMES, OTHER_SERIES];
    for (const user of ['admin', 'other'] as const) {
      for (const measure of SERIES_MEASURES.filter((one) => one !== 'depth' && one !== 'age')) {
        for (const range of RANGES) {
          for (const task of tasks) await same(`/api/metrics/series?measure=${measure}&task=${encodeURIComponent(task)}${range}`, user);
          await same(`/api/metrics/series?measure=${measure}${range}`, user);
          await same(`/api/metrics/series?measure=${measure}&queue=mail${range}`, user);
        }
        await same(`/api/metrics/series?measure=${measure}&task=tasks.render&queue=reports&step=6h${RANGES[1]}`, user);
        await same(`/api/metrics/series?measure=${measure}&step=1d&from=${iso(T0 - 5 * DAY_MS)}&to=${iso(T0)}`, user);
      }
      for (const measure of ['depth', 'age']) {
        for (const queue of QUEUES) await same(`/api/metrics/series?measure=${measure}&queue=${queue}&from=${iso(T0 - 15 * MINUTE_MS)}&to=${iso(T0)}&step=1m`, user);
      }
    }
    const drawn = await same(`/api/metrics/series${RANGES[0]}`);
    expect(drawn.markers.length).toBe(owned.admin.length);
    const depth = await same(`/api/metrics/series?measure=depth&queue=mail&from=${iso(T0 - 15 * MINUTE_MS)}&to=${iso(T0)}&step=1m`);
    expect(depth.points.filter((point: { samples: number }) => point.samples > 0).length).toBe(3);
    await same(`/api/metrics/series?task=tasks.add&connectionId=${owned.admin[2]}`);
  }, 120_000);

  test('refusals are the same: a step of no whole buckets, too many points, depth without a queue', async () => {
    await same(`/api/metrics/series?step=90m${RANGES[1]}`);
    await same(`/api/metrics/series?step=1m&from=${iso(T0 - 40 * DAY_MS)}&to=${iso(T0)}`);
    await same('/api/metrics/series?measure=depth');
  });
});
