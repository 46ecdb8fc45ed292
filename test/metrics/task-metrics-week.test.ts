/**
 * A week of simulated jobs of three tasks in two queues goes through ingest, with the
 * clock the test moves, retention's run every ten minutes (jobs are kept one day), one
 * batch a day held back three hours (an agent's spool), and two restarts (one from a
 * snapshot, one replaying the log). At the end every bucket of every tier of every series
 * is checked against an exact computation over the same jobs: counts equal, and each
 * percentile equal to the bin of the exact percentile (so within 5% of it); and the reads
 * the routes answer with agree over whole ranges. The jobs themselves are long gone.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, type EngineRecord } from '../../actors/engine.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { binOfMs, binValueMs, percentileRank } from '../../actors/metrics/duration-bins.ts';
import { ALL_PARTS, COUNT_KINDS, PERCENTILES, type CountKind, type MeasureSum } from '../../actors/metrics/measure-sum.ts';
import type { MetricSeries } from '../../actors/metrics/metric-series.ts';
import { TASK_METRICS_DEFAULTS, TIER_NAMES, TIER_WIDTH_MS } from '../../actors/metrics/metric-tiers.ts';
import { readWindow } from '../../actors/metrics/metric-reads.ts';
import { seriesPoints, stepWindow, taskTable } from '../../actors/metrics/task-metrics-query.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { iso, jobEvent } from '../support/events.ts';
import { withOwnTeam } from '../support/team-access.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const START_MS = Date.parse('2026-11-02T00:00:00.000Z');
const SLICE_MS = 10 * MINUTE_MS;
const SLICES = (7 * DAY_MS) / SLICE_MS;
const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 50_000, maxJobsPerConnection: 1_000_000, retentionMs: DAY_MS };

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function open(dir: string, clock: ManualClock) {
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', log: () => undefined });
  const engine = new Engine({ clock, log: store, limits: LIMITS });
  const restorer = engine.restorer();
  await store.recover({ snapshotChunk: (chunk) => restorer.restore(chunk), record: (record) => engine.evolve(record as EngineRecord) });
  return { store, engine };
}

/** A seeded generator, so a failure replays exactly. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Sample {
  atMs: number;
  kind: CountKind | 'run' | 'wait';
  value: number;
}

/** What each series should hold: its samples, by (task, queue) and by queue. */
const expected = new Map<string, Sample[]>();
const samplesOf = (key: string): Sample[] => {
  let list = expected.get(key);
  if (list === undefined) expected.set(key, (list = []));
  return list;
};
const taskKey = (task: string, queue: string) => `task ${task} ${queue}`;
const queueKey = (queue: string) => `queue ${queue}`;
function expect_(task: string, queue: string, sample: Sample): void {
  samplesOf(taskKey(task, queue)).push(sample);
  samplesOf(queueKey(queue)).push(sample);
}

const TASKS = [
  { name: 'reports.nightly', queue: 'slow', perSlice: 2, runMs: 90_000 },
  { name: 'mail.send', queue: 'default', perSlice: 8, runMs: 40 },
  { name: 'images.resize', queue: 'default', perSlice: 5, runMs: 1_500 },
];

/** Every job event of the week, and the samples it should produce. */
function simulate(connectionId: string): { jobs: number; events: Array<{ atMs: number; event: unknown }> } {
  const next = random(20261102);
  const events: Array<{ atMs: number; event: unknown }> = [];
  let serial = 0;
  for (let slice = 0; slice < SLICES; slice++) {
    for (const task of TASKS) {
      for (let n = 0; n < task.perSlice; n++) {
        const externalId = `j${serial++}`;
        const job = (atMs: number, state: string, extra: Record<string, unknown> = {}) =>
          events.push({ atMs, event: jobEvent(connectionId, atMs, { externalId, name: task.name, queue: task.queue, state, createdAt: iso(enqueuedMs), ...extra }) });
        const enqueuedMs = START_MS + slice * SLICE_MS + Math.floor(next() * SLICE_MS);
        // waits from 0 ms to ~40 s, runs spread over two orders of magnitude around the task's typical time
        const waitMs = Math.floor(next() ** 3 * 40_000);
        const runMs = Math.max(1, Math.round(task.runMs * Math.exp((next() - 0.5) * 4)));
        const startedMs = enqueuedMs + waitMs;
        const finishedMs = startedMs + runMs;
        const roll = next();
        job(enqueuedMs, 'queued');
        if (roll < 0.03) {
          const cancelledMs = enqueuedMs + 1;
          job(cancelledMs, 'cancelled');
          expect_(task.name, task.queue, { atMs: cancelledMs, kind: 'cancelled', value: 1 });
          continue;
        }
        job(startedMs, 'active', { startedAt: iso(startedMs) });
        expect_(task.name, task.queue, { atMs: startedMs, kind: 'wait', value: waitMs });
        const fails = roll < 0.15;
        job(finishedMs, fails ? 'failed' : 'completed', { startedAt: iso(startedMs), completedAt: iso(finishedMs), ...(fails ? { error: 'Timeout' } : {}) });
        expect_(task.name, task.queue, { atMs: finishedMs, kind: fails ? 'failed' : 'completed', value: 1 });
        expect_(task.name, task.queue, { atMs: finishedMs, kind: 'run', value: runMs });
        if (fails && roll < 0.1) {
          // retried once: a second run that completes
          const retryMs = finishedMs + 1_000;
          const secondStartMs = retryMs + 5_000;
          const secondEndMs = secondStartMs + runMs;
          job(retryMs, 'retrying', { attempt: 2 });
          job(secondStartMs, 'active', { attempt: 2, startedAt: iso(secondStartMs) });
          job(secondEndMs, 'completed', { attempt: 2, startedAt: iso(secondStartMs), completedAt: iso(secondEndMs) });
          expect_(task.name, task.queue, { atMs: retryMs, kind: 'retried', value: 1 });
          expect_(task.name, task.queue, { atMs: secondStartMs, kind: 'wait', value: secondStartMs - enqueuedMs });
          expect_(task.name, task.queue, { atMs: secondEndMs, kind: 'completed', value: 1 });
          expect_(task.name, task.queue, { atMs: secondEndMs, kind: 'run', value: runMs });
        }
      }
    }
  }
  return { jobs: serial, events: events.sort((a, b) => a.atMs - b.atMs) };
}

/** The exact figures of samples in [fromMs, toMs): counts, and each percentile as the histogram must report it. */
function exactFigures(samples: readonly Sample[], fromMs: number, toMs: number) {
  const inRange = samples.filter((sample) => sample.atMs >= fromMs && sample.atMs < toMs);
  const counts = Object.fromEntries(COUNT_KINDS.map((kind) => [kind, inRange.filter((sample) => sample.kind === kind).length]));
  const durations = (kind: 'run' | 'wait') => {
    const values = inRange.filter((sample) => sample.kind === kind).map((sample) => sample.value).sort((a, b) => a - b);
    const percentile = (permille: number) => (values.length === 0 ? null : values[percentileRank(values.length, permille) - 1]!);
    return {
      count: values.length,
      exact: Object.values(PERCENTILES).map(percentile),
      binned: Object.values(PERCENTILES).map((permille) => {
        const value = percentile(permille);
        return value === null ? null : binValueMs(binOfMs(value));
      }),
    };
  };
  return { counts, run: durations('run'), wait: durations('wait') };
}

function readFigures(sum: MeasureSum) {
  const durations = (kind: 'run' | 'wait') => ({ count: kind === 'run' ? sum.runCount : sum.waitCount, read: Object.values(PERCENTILES).map((permille) => sum.percentile(kind, permille)) });
  return { counts: Object.fromEntries(COUNT_KINDS.map((kind) => [kind, sum.count(kind)])), run: durations('run'), wait: durations('wait') };
}

function expectSame(sum: MeasureSum, samples: readonly Sample[], fromMs: number, toMs: number, where: string): void {
  const exact = exactFigures(samples, fromMs, toMs);
  const read = readFigures(sum);
  expect({ where, counts: read.counts }).toEqual({ where, counts: exact.counts });
  for (const kind of ['run', 'wait'] as const) {
    expect({ where, kind, count: read[kind].count, percentiles: read[kind].read }).toEqual({ where, kind, count: exact[kind].count, percentiles: exact[kind].binned });
    exact[kind].exact.forEach((value, at) => {
      if (value !== null && value >= 1) expect(Math.abs(read[kind].read[at]! - value) / value).toBeLessThanOrEqual(0.05);
    });
  }
}

/** Every bucket each tier still answers for, against the exact figures of its period; none kept past its tier's time. */
function checkEveryBucket(series: MetricSeries, samples: readonly Sample[], nowMs: number, where: string): number {
  let checked = 0;
  for (const tier of TIER_NAMES) {
    const widthMs = TIER_WIDTH_MS[tier];
    const firstKept = Math.floor((nowMs - TASK_METRICS_DEFAULTS.retentionMs[tier]) / widthMs);
    const held = new Map(series.tiers[tier].sums(ALL_PARTS));
    for (const bucket of held.keys()) expect({ where, tier, bucket, kept: bucket >= firstKept }).toEqual({ where, tier, bucket, kept: true });
    const buckets = new Set([...held.keys(), ...samples.map((sample) => Math.floor(sample.atMs / widthMs)).filter((bucket) => bucket >= firstKept)]);
    for (const bucket of buckets) {
      const sum = held.get(bucket);
      expect({ where, tier, bucket, held: sum !== undefined }).toEqual({ where, tier, bucket, held: true });
      expectSame(sum!, samples, bucket * widthMs, (bucket + 1) * widthMs, `${where} ${tier} ${bucket}`);
      checked++;
    }
  }
  return checked;
}

test('given a week of jobs through ingest, restarts and retention, then every bucket of every tier equals the exact computation over the same jobs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jw-task-metrics-week-'));
  dirs.push(dir);
  const clock = new ManualClock(START_MS);
  let opened = await open(dir, clock);
  const admin = await new AccountService(opened.engine, DAY_MS, 'secret-for-tests').addUser('admin@example.com', 'a long password!', true);
  const { connection, apiKey } = await new ConnectionService(opened.engine).create(await withOwnTeam(opened.engine, admin), 'prod', undefined);
  const { jobs, events } = simulate(connection.id);
  const heldBack = new Map<number, unknown[]>();
  let cursor = 0;
  let eventsSent = 0;
  for (let slice = 0; slice < SLICES; slice++) {
    const endMs = START_MS + (slice + 1) * SLICE_MS;
    clock.set(endMs);
    const batch: unknown[] = [];
    while (cursor < events.length && events[cursor]!.atMs < endMs) batch.push(events[cursor++]!.event);
    eventsSent += batch.length;
    if (slice % 144 === 77) heldBack.set(slice + 18, batch);
    else for (let start = 0; start < batch.length; start += 1_000) await ingestEvents(opened.engine, apiKey, batch.slice(start, start + 1_000));
    const late = heldBack.get(slice);
    if (late !== undefined) await ingestEvents(opened.engine, apiKey, late);
    await opened.engine.commit({ t: 'retention', atMs: endMs });
    if (slice === 300) await opened.store.writeSnapshot(opened.engine.takeSnapshot());
    if (slice === 300 || slice === 700) {
      await opened.store.close();
      opened = await open(dir, clock);
    }
  }
  expect(heldBack.size).toBe(7);
  const nowMs = clock.nowMs();
  const actor = opened.engine.connection(connection.id)!;
  // retention removed all but the last day's jobs long ago
  expect(eventsSent).toBe(events.length);
  expect(jobs).toBeGreaterThan(15_000);
  expect(actor.jobs.size).toBeLessThan(jobs / 5);

  const metrics = actor.taskMetrics;
  let buckets = 0;
  for (const task of TASKS) {
    const [series] = metrics.seriesOfTask(task.name, task.queue);
    buckets += checkEveryBucket(series!, expected.get(taskKey(task.name, task.queue))!, nowMs, task.name);
  }
  for (const queue of ['default', 'slow']) buckets += checkEveryBucket(metrics.seriesOfQueue(queue)!, expected.get(queueKey(queue))!, nowMs, `queue ${queue}`);
  // every minute of the last 48 h, hour and day with a sample in it, for 5 series
  expect(buckets).toBeGreaterThan(5 * (168 + 7) + 3 * 2_000);

  // what GET /api/metrics/tasks reads: the whole week (days and hours), and the last 24 h and a ragged range (minutes at the edges)
  for (const [fromMs, toMs] of [
    [START_MS, nowMs],
    [nowMs - DAY_MS, nowMs],
    [nowMs - 30 * HOUR_MS - 17 * MINUTE_MS, nowMs - 3 * HOUR_MS - 41 * MINUTE_MS],
  ] as const) {
    const table = taskTable([metrics], { fromMs, toMs, nowMs, spark: 'runP95' })!;
    expect(table.window).toEqual({ fromMs, toMs, tier: toMs - fromMs > 2 * DAY_MS ? 'hour' : 'minute' });
    for (const task of TASKS) {
      const row = table.rows.find((each) => each.task === task.name)!;
      const exact = exactFigures(expected.get(taskKey(task.name, task.queue))!, fromMs, toMs);
      expect({ task: task.name, fromMs, completed: row.current.completed, failed: row.current.failed, retried: row.current.retried, cancelled: row.current.cancelled }).toEqual({ task: task.name, fromMs, ...(exact.counts as Record<CountKind, number>) });
      expect([row.current.runTime.p50, row.current.runTime.p95, row.current.runTime.p99]).toEqual(exact.run.binned);
      expect([row.current.waitTime.p50, row.current.waitTime.p95, row.current.waitTime.p99]).toEqual(exact.wait.binned);
    }
  }

  // what GET /api/metrics/series reads: a task's counts hour by hour over the week
  const window = stepWindow(readWindow(metrics.settings, START_MS, nowMs, nowMs), HOUR_MS);
  const points = seriesPoints([metrics], { task: 'mail.send' }, 'counts', window, HOUR_MS);
  expect(points).toHaveLength(168);
  points.forEach((point, at) => {
    const exact = exactFigures(expected.get(taskKey('mail.send', 'default'))!, START_MS + at * HOUR_MS, START_MS + (at + 1) * HOUR_MS);
    expect(point).toEqual({ at: iso(START_MS + at * HOUR_MS), ...(exact.counts as Record<CountKind, number>) });
  });

  // one more restart changes nothing that is read
  const before = TIER_NAMES.map((tier) => metrics.seriesOfTask('images.resize', 'default')[0]!.tiers[tier].sums(ALL_PARTS));
  await opened.store.close();
  opened = await open(dir, clock);
  const after = TIER_NAMES.map((tier) => opened.engine.connection(connection.id)!.taskMetrics.seriesOfTask('images.resize', 'default')[0]!.tiers[tier].sums(ALL_PARTS));
  expect(after).toEqual(before);
  await opened.store.close();
}, 300_000);
