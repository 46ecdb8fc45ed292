/**
 * The value of a rule's condition now, read from what the views read: the queue metrics'
 * buckets, the queue depths, the workers' liveness, the per-name and per-state job
 * indexes. Nothing here scans all jobs, so every rule can be evaluated every few seconds.
 *
 * Values: failure_rate a fraction (0 to 1); queue_depth a job count (of the queues not
 * paused, unless the rule includes paused ones); worker_offline, task_missing and job_stuck
 * seconds; runtime_percentile the p95 run time in ms, or, against the week before, how many
 * times that window's p95 the current one is.
 */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { Queue } from '../connection/queue-store.ts';
import { effectiveWorkerState, livenessMs, type Worker } from '../connection/worker-store.ts';
import { ALERT_LIMITS, type AlertRule } from './alert-model.ts';
import { PART, PERCENTILES } from '../metrics/measure-sum.ts';
import { readWindow, sumRange } from '../metrics/metric-reads.ts';
import { stuckWorkflowSinceMs } from './workflow-stuck.ts';

export interface Measure {
  /** null when there is nothing to measure (no finished job, no queue, no active job) */
  value: number | null;
  /** the condition holds now */
  breached: boolean;
  /** queue_depth: every queue the rule looks at is paused, and the rule leaves paused queues out */
  paused?: true;
}

/** How many of a task's newest jobs task_missing looks at for a completion. */
export const TASK_MISSING_SCAN_MAX = 1_000;

export type MeasuredRule = Pick<AlertRule, 'kind' | 'queue' | 'task' | 'threshold' | 'windowSeconds' | 'createdAtMs' | 'relativeTo'> & Partial<Pick<AlertRule, 'includePaused'>>;

export function measure(rule: MeasuredRule, actor: ConnectionActor, nowMs: number): Measure {
  const windowMs = rule.windowSeconds * 1000;
  switch (rule.kind) {
    case 'failure_rate': {
      let succeeded = 0;
      let failed = 0;
      for (const queue of queuesOf(rule, actor)) {
        const counts = queue.metrics.finishedWithin(windowMs, nowMs);
        succeeded += counts.succeeded;
        failed += counts.failed;
      }
      const finished = succeeded + failed;
      const value = finished === 0 ? null : failed / finished;
      return { value, breached: value !== null && finished >= ALERT_LIMITS.failureRateMinFinished && value > (rule.threshold ?? 0) };
    }
    case 'queue_depth': {
      let deepest: number | null = null;
      let skipped = 0;
      for (const queue of queuesOf(rule, actor)) {
        // a paused queue grows by design: it does not fire unless the rule asks
        if (queue.paused === true && rule.includePaused !== true) {
          skipped++;
          continue;
        }
        const depth = queue.depth ?? actor.jobs.queuedPerQueue.get(queue.name);
        if (deepest === null || depth > deepest) deepest = depth;
      }
      if (deepest === null && skipped > 0) return { value: null, breached: false, paused: true };
      return { value: deepest, breached: deepest !== null && deepest > (rule.threshold ?? 0) };
    }
    case 'worker_offline': {
      const workers: Iterable<Worker> = rule.queue === null ? actor.workers.values() : actor.workers.listing(rule.queue);
      let lastAliveMs = Number.NEGATIVE_INFINITY;
      for (const worker of workers) {
        if (effectiveWorkerState(worker, nowMs) !== 'offline') return { value: 0, breached: false };
        lastAliveMs = Math.max(lastAliveMs, livenessMs(worker));
      }
      // never a worker: offline since the rule exists
      const offlineSinceMs = lastAliveMs === Number.NEGATIVE_INFINITY ? rule.createdAtMs : lastAliveMs;
      return secondsSince(offlineSinceMs, nowMs, windowMs);
    }
    case 'task_missing': {
      const lastCompletedMs = rule.task === null ? null : actor.jobs.lastCompletedAtOfName(rule.task, TASK_MISSING_SCAN_MAX);
      // never completed: missing since the rule exists
      return secondsSince(lastCompletedMs ?? rule.createdAtMs, nowMs, windowMs);
    }
    case 'runtime_percentile':
      return runtimePercentile(rule, actor, nowMs);
    case 'job_stuck': {
      let oldestStartMs: number | null = null;
      const { table } = actor.jobs;
      for (const row of actor.jobs.activeRows()) {
        if (rule.task !== null && table.nameOf(row) !== rule.task) continue;
        if (rule.queue !== null && table.queueOf(row) !== rule.queue) continue;
        const startedMs = table.startedAtMsOf(row) ?? table.lastEventMsOf(row);
        if (oldestStartMs === null || startedMs < oldestStartMs) oldestStartMs = startedMs;
      }
      return oldestStartMs === null ? { value: null, breached: false } : secondsSince(oldestStartMs, nowMs, windowMs);
    }
    case 'workflow_stuck': {
      const stuck = stuckWorkflowSinceMs(actor.jobs, rule.task);
      if (stuck.rootStartMs === null && stuck.failedChildMs === null) return { value: null, breached: false };
      const sinceMs = Math.min(stuck.rootStartMs ?? Number.POSITIVE_INFINITY, stuck.failedChildMs ?? Number.POSITIVE_INFINITY);
      const measured = secondsSince(sinceMs, nowMs, windowMs);
      // a parent waiting on a failed child will not go on by itself: it fires at once
      return stuck.failedChildMs !== null ? { value: measured.value, breached: true } : measured;
    }
  }
}

/** A week: what a runtime_percentile rule compares with, when it compares. */
export const WEEK_MS = 7 * 86_400_000;

/**
 * The task's p95 run time over the window from its task metrics (never the jobs, so it
 * holds past retention): the window's minutes, read as the task metrics read any range.
 * Against the week before, the same window 7 days earlier is read too; there the hour
 * tier answers (the minute tier keeps 48 hours), so its edges are whole hours.
 */
function runtimePercentile(rule: MeasuredRule, actor: ConnectionActor, nowMs: number): Measure {
  const windowMs = rule.windowSeconds * 1000;
  const current = p95Between(rule, actor, nowMs - windowMs, nowMs, nowMs);
  if (current === null) return { value: null, breached: false };
  if ((rule.relativeTo ?? null) === null) return { value: current, breached: current > (rule.threshold ?? 0) };
  const before = p95Between(rule, actor, nowMs - WEEK_MS - windowMs, nowMs - WEEK_MS, nowMs);
  if (before === null || before === 0) return { value: null, breached: false };
  const ratio = current / before;
  return { value: ratio, breached: ratio > (rule.threshold ?? 0) };
}

/** p95 run time of the rule's task (in its queue, if it names one) over [fromMs, toMs); null under the minimum of runs. */
function p95Between(rule: MeasuredRule, actor: ConnectionActor, fromMs: number, toMs: number, nowMs: number): number | null {
  if (rule.task === null) return null;
  const metrics = actor.taskMetrics;
  const window = readWindow(metrics.settings, fromMs, toMs, nowMs);
  const sum = sumRange(metrics.seriesOfTask(rule.task, rule.queue ?? undefined), window, PART.run);
  return sum.runCount < ALERT_LIMITS.runtimeMinRuns ? null : sum.percentile('run', PERCENTILES.p95);
}

function queuesOf(rule: MeasuredRule, actor: ConnectionActor): Iterable<Queue> {
  if (rule.queue === null) return actor.queues.values();
  const queue = actor.queues.get(rule.queue);
  return queue === undefined ? [] : [queue];
}

/** Whole seconds since `sinceMs` (never negative); breached once more than the window passed. */
function secondsSince(sinceMs: number, nowMs: number, windowMs: number): Measure {
  const elapsedMs = Math.max(0, nowMs - sinceMs);
  return { value: Math.floor(elapsedMs / 1000), breached: elapsedMs > windowMs };
}
