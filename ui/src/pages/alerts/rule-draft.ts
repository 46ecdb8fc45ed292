/**
 * A rule as the form holds it (fields as typed: a failure rate in percent, a window in
 * minutes), made from a rule or blank, and the body fields the API takes from it.
 */
import { KIND_FIELDS } from '../../../../actors/alerts/alert-model.ts';
import type { AlertKind, PublicConnection, PublicRule } from '../../api/types.ts';

export interface Draft {
  connectionId: string;
  name: string;
  kind: AlertKind;
  queue: string;
  task: string;
  /** as typed: a percentage for failure_rate, a job count for queue_depth, ms or a factor for runtime_percentile */
  threshold: string;
  windowMinutes: string;
  channelIds: string[];
  /** runtime_percentile: '' against its threshold in ms, or `week_before` */
  relativeTo: string;
  /** queue_depth: measure paused queues too */
  includePaused: boolean;
}

export function draftOf(rule: PublicRule | null, connections: PublicConnection[]): Draft {
  if (rule === null) {
    return { connectionId: connections[0]?.id ?? '', name: '', kind: 'failure_rate', queue: '', task: '', threshold: '20', windowMinutes: '5', channelIds: [], relativeTo: '', includePaused: false };
  }
  const threshold = rule.threshold === null ? '' : rule.kind === 'failure_rate' ? String(Math.round(rule.threshold * 1000) / 10) : String(rule.threshold);
  return { connectionId: rule.connectionId, name: rule.name, kind: rule.kind, queue: rule.queue ?? '', task: rule.task ?? '', threshold, windowMinutes: String(rule.windowSeconds / 60), channelIds: [...rule.channelIds], relativeTo: rule.relativeTo ?? '', includePaused: rule.includePaused };
}

/** The body fields of a draft, as the API takes them (fields the kind does not take are left out). */
export function ruleFields(draft: Draft) {
  const fields = KIND_FIELDS[draft.kind];
  const number = Number(draft.threshold);
  return {
    kind: draft.kind,
    queue: fields.queue === 'refused' || draft.queue.trim() === '' ? null : draft.queue.trim(),
    task: fields.task === 'refused' || draft.task.trim() === '' ? null : draft.task.trim(),
    threshold: fields.threshold === 'refused' || draft.threshold.trim() === '' ? null : draft.kind === 'failure_rate' ? number / 100 : number,
    windowSeconds: Math.round(Number(draft.windowMinutes) * 60),
    relativeTo: fields.relativeTo === 'refused' || draft.relativeTo !== 'week_before' ? null : ('week_before' as const),
    includePaused: fields.includePaused === 'optional' && draft.includePaused,
  };
}

/** The threshold's label and bounds for the draft's kind (and, for run time, what it is compared with). */
export function thresholdInput(draft: Draft): { label: string; min: number; max?: number; step: number | 'any' } {
  if (draft.kind === 'failure_rate') return { label: 'Threshold (%)', min: 0, max: 99.9, step: 0.1 };
  if (draft.kind !== 'runtime_percentile') return { label: 'Threshold (jobs)', min: 0, step: 1 };
  return draft.relativeTo === 'week_before' ? { label: 'Times the week before', min: 1.01, max: 100, step: 'any' } : { label: 'Threshold (ms)', min: 1, step: 1 };
}
