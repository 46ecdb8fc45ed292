/**
 * A canonical, comparable picture of everything an engine holds: accounts, and per
 * connection every job (all fields and history), every index's order, tallies, workers,
 * queues with metrics for every range, dedup keys, quota, commands and their outcomes.
 */
import { childRowsOf, relationsOf } from '../../actors/connection/job-links.ts';
import type { Engine } from '../../actors/engine.ts';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { TIME_RANGES } from '../../actors/metrics/queue-metrics.ts';
import { ALL_PARTS, type MeasureSum } from '../../actors/metrics/measure-sum.ts';
import type { MetricSeries } from '../../actors/metrics/metric-series.ts';
import { TIER_NAMES } from '../../actors/metrics/metric-tiers.ts';
import type { TaskMetrics } from '../../actors/metrics/task-metrics.ts';

export function dumpEngine(engine: Engine, nowMs: number) {
  const connections: Record<string, unknown> = {};
  for (const id of [...engine.connectionIds()].sort()) {
    const actor = engine.connection(id)!;
    const jobs = [...actor.jobs.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    connections[id] = {
      jobs: jobs.map((job) => {
        const row = actor.jobs.rowOf(job.id);
        // the child index and the resolved links: what a restart must rebuild from the relation columns
        const children = [...childRowsOf(actor.jobs, row)].map((child) => actor.jobs.table.id(child)).sort();
        return { ...job, recent: actor.jobs.recentOfName(job, 10).map((other) => other.id), children, relations: relationsOf(actor.jobs, row) };
      }),
      indexes: Object.fromEntries(
        JOB_SORT_KEYS.flatMap((key) => (['asc', 'desc'] as const).map((order) => [`${key}-${order}`, [...actor.jobs.indexes[key].scan(order)].map((entry) => actor.jobs.table.id(entry.item))])),
      ),
      tallies: { failed: actor.jobs.countWhere((job) => job.state === 'failed'), queued: actor.jobs.queuedPerQueue.get('q1'), active: actor.jobs.activePerWorker.get('w1') },
      workers: [...actor.workers.values()].map((worker) => ({ ...worker, rate: worker.rate.taskRatePerMinute(nowMs) })),
      consumerIndex: Object.fromEntries(['q0', 'q1', 'q2'].map((name) => [name, [...actor.workers.listing(name)].map((worker) => worker.id).sort()])),
      queues: [...actor.queues.values()].map((queue) => ({ ...queue, metrics: TIME_RANGES.map((range) => queue.metrics.view(range, nowMs)) })),
      dedup: actor.dedup.toSnapshot(),
      quota: actor.quota.usage(nowMs),
      dailyBytes: actor.quota.bytesUsed(nowMs),
      retainedBytes: actor.jobs.retainedBytes,
      commands: actor.commands.toSnapshot(),
      commandOutcomes: actor.commandOutcomes.toSnapshot(),
      taskMetrics: dumpTaskMetrics(actor.taskMetrics),
      markers: actor.markers.toSnapshot(),
    };
  }
  return { accounts: engine.accounts.toSnapshot(), connections };
}

/** Every bucket of every tier of every task metrics series, as plain numbers. */
export function dumpTaskMetrics(metrics: TaskMetrics) {
  const nonZero = (sum: MeasureSum, kind: 'run' | 'wait') => {
    const pairs: number[] = [];
    if ((kind === 'run' ? sum.runCount : sum.waitCount) === 0) return pairs;
    const bins = sum.bins(kind);
    for (let bin = 0; bin < bins.length; bin++) if (bins[bin] !== 0) pairs.push(bin, bins[bin]!);
    return pairs;
  };
  const plain = (sum: MeasureSum) => ({ counts: [...sum.counts], run: nonZero(sum, 'run'), wait: nonZero(sum, 'wait'), gauges: [...sum.gauges] });
  const series = (one: MetricSeries) => ({
    lastActiveMs: one.lastActiveMs,
    tiers: Object.fromEntries(TIER_NAMES.map((tier) => [tier, one.tiers[tier].sums(ALL_PARTS).map(([bucket, sum]) => [bucket, plain(sum)])])),
  });
  const tasks = [...metrics.taskNames()].sort().flatMap((task) => metrics.queuesOfTask(task).sort().map((queue) => ({ task, queue, series: series(metrics.seriesOfTask(task, queue)[0]!) })));
  const queues = [...metrics.queueNames()].sort().map((queue) => ({ queue, series: series(metrics.seriesOfQueue(queue)!) }));
  const fold = (other: TaskMetrics['otherTasks']) => (other === null ? null : { folded: other.folded, series: series(other.series) });
  return { tasks, queues, otherTasks: fold(metrics.otherTasks), otherQueues: fold(metrics.otherQueues) };
}
