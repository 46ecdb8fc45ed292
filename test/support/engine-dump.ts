/**
 * A canonical, comparable picture of everything an engine holds: accounts, and per
 * connection every job (all fields and history), every index's order, tallies, workers,
 * queues with metrics for every range, dedup keys, quota, commands and their outcomes.
 */
import { childRowsOf, relationsOf } from '../../actors/connection/job-links.ts';
import type { Engine } from '../../actors/engine.ts';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { TIME_RANGES } from '../../actors/metrics/queue-metrics.ts';

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
    };
  }
  return { accounts: engine.accounts.toSnapshot(), connections };
}
