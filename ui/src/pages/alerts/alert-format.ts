/** How the Alerts page writes a rule's condition and values in words. */
import { ALERT_KINDS } from '../../../../actors/alerts/alert-model.ts';
import type { AlertKind, PublicRule } from '../../api/types.ts';

export { ALERT_KINDS };

export const KIND_LABELS: Record<AlertKind, string> = {
  failure_rate: 'Failure rate',
  queue_depth: 'Queue depth',
  worker_offline: 'Workers offline',
  task_missing: 'Task missing',
  job_stuck: 'Job stuck',
};

export const KIND_HINTS: Record<AlertKind, string> = {
  failure_rate: 'Failed / finished jobs over the window is above the threshold (a percentage), over at least 5 finished jobs.',
  queue_depth: "A queue's depth stays above the threshold for the whole window (no queue named: the deepest).",
  worker_offline: 'No worker (or none consuming the queue) is online for the window.',
  task_missing: 'No job of the task completed within the window: the dead man’s switch for periodic tasks.',
  job_stuck: 'A job (of the task or queue, if named) has been active longer than the window.',
};

/** 90 -> "90 s", 300 -> "5 min", 7200 -> "2 h", 86400 -> "1 d". */
export function durationText(seconds: number): string {
  if (seconds >= 86_400 && seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds >= 3_600 && seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** A measured value in the kind's unit; "–" when there is nothing to measure. */
export function valueText(kind: AlertKind, value: number | null): string {
  if (value === null) return '–';
  switch (kind) {
    case 'failure_rate':
      return `${Math.round(value * 1000) / 10}%`;
    case 'queue_depth':
      return `${value.toLocaleString()} jobs`;
    default:
      return durationText(value);
  }
}

/** "failure rate > 20% over 5 min · queue emails". */
export function conditionText(rule: Pick<PublicRule, 'kind' | 'threshold' | 'windowSeconds' | 'queue' | 'task'>): string {
  const window = durationText(rule.windowSeconds);
  const threshold = rule.threshold ?? 0;
  const main: Record<AlertKind, string> = {
    failure_rate: `failure rate > ${Math.round(threshold * 1000) / 10}% over ${window}`,
    queue_depth: `depth > ${threshold} for ${window}`,
    worker_offline: `no worker online for ${window}`,
    task_missing: `no completion within ${window}`,
    job_stuck: `a job active > ${window}`,
  };
  const scope = [rule.queue === null ? null : `queue ${rule.queue}`, rule.task === null ? null : `task ${rule.task}`].filter((part) => part !== null);
  return [main[rule.kind], ...scope].join(' · ');
}
