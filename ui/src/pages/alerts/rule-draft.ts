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
  /** as typed: a percentage for failure_rate, a job count for queue_depth */
  threshold: string;
  windowMinutes: string;
  channelIds: string[];
  /** queue_depth: measure paused queues too */
  includePaused: boolean;
}

export function draftOf(rule: PublicRule | null, connections: PublicConnection[]): Draft {
  if (rule === null) {
    return { connectionId: connections[0]?.id ?? '', name: '', kind: 'failure_rate', queue: '', task: '', threshold: '20', windowMinutes: '5', channelIds: [], includePaused: false };
  }
  const threshold = rule.threshold === null ? '' : rule.kind === 'failure_rate' ? String(Math.round(rule.threshold * 1000) / 10) : String(rule.threshold);
  return { connectionId: rule.connectionId, name: rule.name, kind: rule.kind, queue: rule.queue ?? '', task: rule.task ?? '', threshold, windowMinutes: String(rule.windowSeconds / 60), channelIds: [...rule.channelIds], includePaused: rule.includePaused };
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
    includePaused: fields.includePaused === 'optional' && draft.includePaused,
  };
}
