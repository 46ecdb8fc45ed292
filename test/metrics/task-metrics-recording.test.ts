/**
 * A connection's task metrics as the connection actor records them: which transitions
 * count, wait and run times, revokes and retries, queue samples at retention's run, the
 * tiers an old event reaches, the cap with its `(other)` fold, and series that retention
 * empties going away.
 */
import { describe, expect, test } from 'bun:test';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { binOfMs, binValueMs } from '../../actors/metrics/duration-bins.ts';
import { ALL_PARTS, MeasureSum } from '../../actors/metrics/measure-sum.ts';
import { TASK_METRICS_DEFAULTS, TIER_NAMES } from '../../actors/metrics/metric-tiers.ts';
import type { MetricSeries } from '../../actors/metrics/metric-series.ts';
import { TaskMetrics } from '../../actors/metrics/task-metrics.ts';
import { OTHER_SERIES, taskTable } from '../../actors/metrics/task-metrics-query.ts';
import { iso, jobEvent, queueEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const CONNECTION = '00000000-0000-4000-8000-000000000001';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

function actor(seriesMax = 500): ConnectionActor {
  return new ConnectionActor(CONNECTION, {
    dailyEventLimit: 0,
    dedupKeysMax: 10_000,
    maxJobsPerConnection: 100_000,
    retentionMs: DAY_MS,
    taskMetrics: { ...TASK_METRICS_DEFAULTS, seriesMax },
  });
}

/** Decides and applies one batch at `nowMs`, as the engine would. */
function ingest(connection: ConnectionActor, nowMs: number, events: unknown[]): void {
  const { record, reply } = connection.decideIngest(events, nowMs);
  expect(reply.rejected).toBe(0);
  if (record !== null) connection.evolve(record);
}

function total(series: readonly MetricSeries[], tier: (typeof TIER_NAMES)[number] = 'day'): MeasureSum {
  const sum = new MeasureSum();
  for (const one of series) one.tiers[tier].addRange(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, sum, ALL_PARTS);
  return sum;
}

const job = (externalId: string, atMs: number, state: string, extra: Record<string, unknown> = {}) =>
  jobEvent(CONNECTION, atMs, { externalId, name: 'tasks.add', queue: 'default', createdAt: iso(T0), state, ...extra });

describe('task metrics of a connection', () => {
  test('given a job queued, started and completed, then its wait and run times and its completion are recorded once, also when the end is sent twice', () => {
    const connection = actor();
    ingest(connection, T0 + 10_000, [job('a', T0, 'queued'), job('a', T0 + 1_500, 'active', { startedAt: iso(T0 + 1_500) })]);
    const done = job('a', T0 + 9_000, 'completed', { startedAt: iso(T0 + 1_500), completedAt: iso(T0 + 9_000) });
    ingest(connection, T0 + 10_000, [done]);
    ingest(connection, T0 + 10_000, [{ ...done, timestamp: iso(T0 + 9_001) }]);

    const sum = total(connection.taskMetrics.seriesOfTask('tasks.add'));
    expect([sum.count('completed'), sum.count('failed'), sum.runCount, sum.waitCount]).toEqual([1, 0, 1, 1]);
    expect(sum.percentile('run', 500)).toBe(binValueMs(binOfMs(7_500)));
    expect(sum.percentile('wait', 500)).toBe(binValueMs(binOfMs(1_500)));
    expect(total([connection.taskMetrics.seriesOfQueue('default')!]).count('completed')).toBe(1);
  });

  test('given a job reported only when it failed, with its start, then its wait is measured at the end', () => {
    const connection = actor();
    ingest(connection, T0 + 10_000, [job('a', T0 + 5_000, 'failed', { startedAt: iso(T0 + 2_000), completedAt: iso(T0 + 5_000) })]);
    const sum = total(connection.taskMetrics.seriesOfTask('tasks.add'));
    expect([sum.count('failed'), sum.waitCount, sum.runCount]).toEqual([1, 1, 1]);
    expect(sum.percentile('wait', 500)).toBe(binValueMs(binOfMs(2_000)));
  });

  test('given a job without a queue, then it has a task series of its own and no queue series', () => {
    const connection = actor();
    ingest(connection, T0 + 10_000, [jobEvent(CONNECTION, T0, { externalId: 'b', name: 'tasks.lonely', queue: undefined, state: 'completed' })]);
    expect(connection.taskMetrics.queuesOfTask('tasks.lonely')).toEqual([null]);
    expect(total(connection.taskMetrics.seriesOfTask('tasks.lonely')).count('completed')).toBe(1);
    expect([...connection.taskMetrics.queueNames()]).toEqual([]);
  });

  test('given a retry and a cancel through events, and through the dashboard once the agent carried them out, then each counts once', () => {
    const connection = actor();
    ingest(connection, T0 + 10_000, [job('a', T0, 'failed'), job('e', T0, 'failed'), job('e', T0 + 1, 'retrying'), job('b', T0, 'queued'), job('c', T0, 'active'), job('d', T0, 'cancelled')]);
    const retry = connection.decideJobAction('retry', [connection.jobs.getByExternalId('a')!.id], T0 + 20_000);
    connection.evolve(retry.record!);
    const revoke = connection.decideJobAction('revoke', [connection.jobs.getByExternalId('b')!.id, connection.jobs.getByExternalId('c')!.id], T0 + 20_000);
    connection.evolve(revoke.record!);
    const counts = () => {
      const sum = total(connection.taskMetrics.seriesOfTask('tasks.add'));
      return [sum.count('failed'), sum.count('retried'), sum.count('cancelled')];
    };
    // requested, not yet done: what the job system reported so far
    expect(counts()).toEqual([2, 1, 1]);
    const [retried, revokedB, revokedC] = connection.commands.oldestFirst(3).map((command) => command.id);
    connection.evolve({ t: 'commands.acked', connectionId: CONNECTION, ids: [retried!, revokedB!], failed: [{ id: revokedC!, reason: 'worker gone' }], atMs: T0 + 30_000 });
    // the retry and one revoke were carried out; the refused revoke never happened
    expect(counts()).toEqual([2, 2, 2]);
  });

  test('given run now, delete, kill and a retry of a job already waiting to retry, carried out, then none counts: they make no state entry, and the job system\'s events count what follows', () => {
    const connection = actor();
    ingest(connection, T0 + 10_000, [job('s', T0, 'scheduled'), job('f', T0, 'failed'), job('r', T0, 'failed'), job('r', T0 + 1, 'retrying'), job('k', T0, 'failed'), job('k', T0 + 1, 'retrying')]);
    const counts = () => {
      const sum = total(connection.taskMetrics.seriesOfTask('tasks.add'));
      return [sum.count('failed'), sum.count('retried'), sum.count('cancelled')];
    };
    expect(counts()).toEqual([3, 2, 0]);
    const idOf = (externalId: string) => connection.jobs.getByExternalId(externalId)!.id;
    for (const [action, externalId] of [['promote', 's'], ['delete', 'f'], ['retry', 'r'], ['kill', 'k']] as const) {
      const decided = connection.decideJobAction(action, [idOf(externalId)], T0 + 20_000);
      expect(decided.results).toEqual([expect.objectContaining({ success: true })]);
      connection.evolve(decided.record!);
    }
    const ids = connection.commands.oldestFirst(4).map((command) => command.id);
    expect(ids.length).toBe(4);
    connection.evolve({ t: 'commands.acked', connectionId: CONNECTION, ids, atMs: T0 + 30_000 });
    expect(counts()).toEqual([3, 2, 0]);
  });

  test('given retention runs, then each queue is sampled: depth from its snapshot or its queued jobs, and the age of its oldest queued job', () => {
    const connection = actor();
    ingest(connection, T0, [job('a', T0 - 60_000, 'queued', { createdAt: iso(T0 - 60_000) }), job('b', T0 - 1_000, 'queued', { createdAt: iso(T0 - 1_000) }), job('c', T0, 'queued', { queue: 'other' })]);
    ingest(connection, T0, [queueEvent(CONNECTION, T0, { name: 'other', depth: 40 })]);
    connection.expire(T0 + 60_000);
    connection.expire(T0 + 120_000);

    const gauges = (queue: string) => [...total([connection.taskMetrics.seriesOfQueue(queue)!], 'minute').gauges];
    // samples, depth sum, deepest, age sum, oldest age
    expect(gauges('default')).toEqual([2, 4, 2, 120_000 + 180_000, 180_000]);
    expect(gauges('other')).toEqual([2, 80, 40, 60_000 + 120_000, 120_000]);
  });

  test('given an idle queue that never had a series, then a sample of nothing waiting makes none', () => {
    const metrics = new TaskMetrics(TASK_METRICS_DEFAULTS);
    metrics.sampleQueue('quiet', T0, 0, 0);
    expect(metrics.seriesOfQueue('quiet')).toBeUndefined();
    metrics.sampleQueue('busy', T0, 3, 1_000);
    expect(metrics.seriesOfQueue('busy')).toBeDefined();
  });

  test('given an event older than the minute tier keeps, then it is written to the hour and day tiers only', () => {
    const metrics = new TaskMetrics(TASK_METRICS_DEFAULTS);
    metrics.recordFinished('tasks.old', null, 'completed', T0 - 50 * HOUR_MS, 10, T0);
    const [series] = metrics.seriesOfTask('tasks.old');
    expect(TIER_NAMES.map((tier) => total([series!], tier).count('completed'))).toEqual([0, 1, 1]);
  });

  test('given more series than the cap, then the least recently active folds into (other), which the table reports with its count', () => {
    const metrics = new TaskMetrics({ ...TASK_METRICS_DEFAULTS, seriesMax: 2 });
    metrics.recordFinished('tasks.a', 'q', 'completed', T0 + 2_000, 5, T0 + 10_000);
    metrics.recordFinished('tasks.b', 'q', 'failed', T0 + 1_000, 5, T0 + 10_000);
    metrics.recordFinished('tasks.c', 'q', 'completed', T0 + 3_000, 5, T0 + 10_000);
    metrics.recordFinished('tasks.d', 'q', 'completed', T0 + 4_000, 5, T0 + 10_000);

    expect([...metrics.taskNames()].sort()).toEqual(['tasks.c', 'tasks.d']);
    expect(metrics.otherTasks?.folded).toBe(2);
    const table = taskTable([metrics], { fromMs: T0, toMs: T0 + HOUR_MS, nowMs: T0 + HOUR_MS, spark: 'throughput' })!;
    const other = table.rows.find((row) => row.task === OTHER_SERIES)!;
    expect([other.folded, other.current.completed, other.current.failed]).toEqual([2, 1, 1]);
    expect(table.foldedSeries).toBe(2);
    // the queue's own series holds every job still
    expect(total([metrics.seriesOfQueue('q')!]).finished).toBe(4);
  });

  test('given series whose every tier has passed its retention, then retention removes them', () => {
    const metrics = new TaskMetrics({ retentionMs: { minute: HOUR_MS, hour: 2 * HOUR_MS, day: 3 * DAY_MS }, seriesMax: 10 });
    metrics.recordFinished('tasks.gone', 'q', 'completed', T0, 5, T0);
    metrics.recordFinished('tasks.kept', 'q', 'completed', T0 + 3 * DAY_MS, 5, T0 + 3 * DAY_MS);
    metrics.maintain(T0 + 3 * DAY_MS + HOUR_MS);
    expect([...metrics.taskNames()]).toEqual(['tasks.gone', 'tasks.kept']);
    metrics.maintain(T0 + 4 * DAY_MS + HOUR_MS);
    expect([...metrics.taskNames()]).toEqual(['tasks.kept']);
    expect(metrics.seriesCount).toEqual({ tasks: 1, queues: 1 });
  });

  test('given an event with a time no Date can hold, then it is skipped and nothing throws', () => {
    const metrics = new TaskMetrics(TASK_METRICS_DEFAULTS);
    metrics.recordFinished('tasks.x', null, 'completed', Number.NaN, 5, T0);
    metrics.recordStarted('tasks.x', null, 9e15, 5, T0);
    expect(total(metrics.seriesOfTask('tasks.x')).isEmpty).toBe(true);
  });
});
