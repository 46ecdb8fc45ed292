/**
 * A rule's condition and values in words, written once for the dashboard (through the
 * API's `condition` and `current.text`) and for chat notifications.
 */
import type { AlertKind, AlertRule, RelativeTo } from './alert-model.ts';

/** 90 -> "90 s", 300 -> "5 min", 7200 -> "2 h", 86400 -> "1 d". */
export function durationText(seconds: number): string {
  if (seconds >= 86_400 && seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds >= 3_600 && seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

export function percentText(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`;
}

/** 850 -> "850 ms", 4200 -> "4.2 s", 95000 -> "95 s", 180000 -> "3 min". */
export function millisecondsText(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return durationText(Math.round(ms / 1000));
}

/** A measured value in its kind's unit; "no data" when there was nothing to measure. */
export function valueText(kind: AlertKind, value: number | null, relativeTo: RelativeTo | null = null): string {
  if (value === null) return 'no data';
  if (kind === 'failure_rate') return percentText(value);
  if (kind === 'queue_depth') return `${value} jobs`;
  if (kind === 'runtime_percentile') return relativeTo === null ? millisecondsText(value) : `${Math.round(value * 100) / 100}x the week before`;
  return durationText(value);
}

/** "failure rate > 20% over 5 min, queue emails". */
export function conditionText(rule: Pick<AlertRule, 'kind' | 'threshold' | 'windowSeconds' | 'queue' | 'task' | 'relativeTo'> & Partial<Pick<AlertRule, 'includePaused'>>): string {
  const window = durationText(rule.windowSeconds);
  const threshold = rule.threshold ?? 0;
  const main: Record<AlertKind, string> = {
    failure_rate: `failure rate > ${percentText(threshold)} over ${window}`,
    queue_depth: `depth > ${threshold} for ${window}`,
    worker_offline: `no worker online for ${window}`,
    task_missing: `no completion within ${window}`,
    job_stuck: `a job active > ${window}`,
    workflow_stuck: `a workflow unfinished > ${window}, or waiting on a failed job`,
    runtime_percentile:
      (rule.relativeTo ?? null) === null ? `p95 run time > ${millisecondsText(threshold)} over ${window}` : `p95 run time > ${threshold}x the same ${window} a week before`,
  };
  const scope = [
    rule.queue === null ? null : `queue ${rule.queue}`,
    rule.task === null ? null : `task ${rule.task}`,
    rule.kind === 'queue_depth' && rule.includePaused === true ? 'paused queues too' : null,
  ].filter((part) => part !== null);
  return [main[rule.kind], ...scope].join(', ');
}
