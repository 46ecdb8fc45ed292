/** Log records that change a connection's alert rules, channels, rule states and delivery queue. */
import type { AlertChannel, AlertRule, Delivery, DeliveryOutcome, RuleState } from './alert-model.ts';

export interface AlertChannelCreatedRecord {
  t: 'alert.channel.created';
  connectionId: string;
  channel: AlertChannel;
}

export interface AlertChannelDeletedRecord {
  t: 'alert.channel.deleted';
  connectionId: string;
  channelId: string;
}

/** Created or replaced (an edit carries the whole rule). */
export interface AlertRuleSavedRecord {
  t: 'alert.rule.saved';
  connectionId: string;
  rule: AlertRule;
}

export interface AlertRuleDeletedRecord {
  t: 'alert.rule.deleted';
  connectionId: string;
  ruleId: string;
}

/**
 * What one evaluation changed: each rule's new state, and the deliveries its transitions
 * queued (ids decided up front). Written only when something changed.
 */
export interface AlertEvaluatedRecord {
  t: 'alert.evaluated';
  connectionId: string;
  atMs: number;
  states: Array<{ ruleId: string; state: RuleState }>;
  deliveries: Delivery[];
}

/** "Send a test": a delivery queued outside any rule. */
export interface AlertTestQueuedRecord {
  t: 'alert.test.queued';
  connectionId: string;
  delivery: Delivery;
}

/** The outcome of one attempt: delivered, retried at `nextAttemptAtMs`, or given up. */
export interface AlertDeliveryAttemptedRecord {
  t: 'alert.delivery.attempted';
  connectionId: string;
  deliveryId: string;
  atMs: number;
  outcome: DeliveryOutcome;
  httpStatus: number | null;
  error: string | null;
  nextAttemptAtMs: number | null;
}

export type AlertRecord =
  | AlertChannelCreatedRecord
  | AlertChannelDeletedRecord
  | AlertRuleSavedRecord
  | AlertRuleDeletedRecord
  | AlertEvaluatedRecord
  | AlertTestQueuedRecord
  | AlertDeliveryAttemptedRecord;

export const ALERT_RECORD_TYPES: ReadonlySet<string> = new Set<AlertRecord['t']>([
  'alert.channel.created',
  'alert.channel.deleted',
  'alert.rule.saved',
  'alert.rule.deleted',
  'alert.evaluated',
  'alert.test.queued',
  'alert.delivery.attempted',
]);

export function isAlertRecord(record: { t: string }): record is AlertRecord {
  return ALERT_RECORD_TYPES.has(record.t);
}
