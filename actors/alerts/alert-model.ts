/**
 * What an alert is made of: rules (a condition over a connection's jobs, queues or
 * workers), webhook channels, each rule's state, and the deliveries waiting to be sent.
 * Plain data only: the log and snapshots carry these shapes as they are.
 */

export const ALERT_KINDS = ['failure_rate', 'queue_depth', 'worker_offline', 'task_missing', 'job_stuck', 'runtime_percentile', 'workflow_stuck'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** Which of queue, task, threshold and a comparison with the week before each kind takes (rule-input.ts checks them; the dashboard's form shows them). */
export interface KindFields {
  queue: 'optional' | 'refused';
  task: 'optional' | 'required' | 'refused';
  threshold: 'required' | 'refused';
  relativeTo: 'optional' | 'refused';
  /** whether the rule may also measure paused queues (a paused queue grows by design) */
  includePaused: 'optional' | 'refused';
}

export const KIND_FIELDS: Record<AlertKind, KindFields> = {
  failure_rate: { queue: 'optional', task: 'refused', threshold: 'required', relativeTo: 'refused', includePaused: 'refused' },
  queue_depth: { queue: 'optional', task: 'refused', threshold: 'required', relativeTo: 'refused', includePaused: 'optional' },
  worker_offline: { queue: 'optional', task: 'refused', threshold: 'refused', relativeTo: 'refused', includePaused: 'refused' },
  task_missing: { queue: 'refused', task: 'required', threshold: 'refused', relativeTo: 'refused', includePaused: 'refused' },
  job_stuck: { queue: 'optional', task: 'optional', threshold: 'refused', relativeTo: 'refused', includePaused: 'refused' },
  runtime_percentile: { queue: 'optional', task: 'required', threshold: 'required', relativeTo: 'optional', includePaused: 'refused' },
  /** `task`: the root's task name */
  workflow_stuck: { queue: 'refused', task: 'optional', threshold: 'refused', relativeTo: 'refused', includePaused: 'refused' },
};

/** What a runtime_percentile rule compares with: its threshold in ms (null), or the same window a week before (`threshold` times it). */
export const RELATIVE_TO = ['week_before'] as const;
export type RelativeTo = (typeof RELATIVE_TO)[number];

export const CHANNEL_FORMATS = ['json', 'slack'] as const;
export type ChannelFormat = (typeof CHANNEL_FORMATS)[number];

export type RuleStatus = 'ok' | 'firing' | 'resolved';
/** what a notice tells: a transition of a rule, or the "send a test" action */
export type NoticeStatus = 'firing' | 'resolved' | 'test';

/** Limits on what a client controls (docs/alerts.md "Limits"). */
export const ALERT_LIMITS = {
  rulesPerConnectionMax: 100,
  channelsPerConnectionMax: 20,
  channelsPerRuleMax: 10,
  nameLengthMax: 100,
  /** queue and task names, as ingest bounds them */
  selectorLengthMax: 255,
  urlLengthMax: 2_048,
  windowSecondsMin: 10,
  /** seven days: the longest range the queue metrics keep */
  windowSecondsMax: 7 * 86_400,
  /** a queue depth threshold; failure_rate thresholds are fractions in (0, 1] */
  depthThresholdMax: 1_000_000_000,
  /** sent or given up, kept per channel */
  deliveryHistoryPerChannel: 100,
  /** waiting to be sent, per connection; past it the oldest is given up */
  pendingDeliveriesMax: 1_000,
  /** transitions kept per connection for GET /api/alerts */
  recentTransitionsMax: 100,
  /** failure_rate fires only over at least this many finished jobs, so one failure of one job pages no one */
  failureRateMinFinished: 5,
  /** runtime_percentile fires only over at least this many runs (in each window compared), so one slow job pages no one */
  runtimeMinRuns: 5,
  /** runtime_percentile reads task metrics, kept by the minute: a shorter window measures nothing more */
  runtimeWindowSecondsMin: 60,
  /** runtime_percentile against the week before: `threshold` times it, at most this */
  runtimeRatioMax: 100,
} as const;

/** How long a delivery is retried before it is given up, and the backoff between attempts. */
export const DELIVERY_RETRY = {
  firstBackoffMs: 5_000,
  backoffMaxMs: 5 * 60_000,
  /** from the delivery's creation: past this a failed attempt is the last */
  retryDurationMs: 60 * 60_000,
} as const;

/** What a user says of a rule (a create's body; an edit's after merging it with the rule). */
export interface RuleInput {
  name: string;
  kind: AlertKind;
  queue: string | null;
  task: string | null;
  threshold: number | null;
  windowSeconds: number;
  channelIds: string[];
  /** runtime_percentile only; absent in rules saved before it existed (read as null) */
  relativeTo?: RelativeTo | null;
  /**
   * queue_depth: measure paused queues too (by default a paused queue, which grows by
   * design, does not fire). Rules saved before it have none: read as false.
   */
  includePaused: boolean;
}

export interface AlertRule extends RuleInput {
  id: string;
  connectionId: string;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface RuleState {
  status: RuleStatus;
  /** sustained kinds (queue_depth): since when the condition holds without a break; null when it does not */
  breachSinceMs: number | null;
  /** when the rule last began firing; kept after it resolves, for the notice */
  firingSinceMs: number | null;
  /** the value that fired it */
  firedValue: number | null;
  /** the time of the last transition (firing or resolved) */
  changedAtMs: number | null;
}

export interface AlertChannel {
  id: string;
  connectionId: string;
  name: string;
  url: string;
  format: ChannelFormat;
  /** signs every request (HMAC-SHA256); shown once at creation, then only used to sign */
  secret: string;
  createdAtMs: number;
  /**
   * The dashboard's address (`scheme://host[:port]`) as the request that created the channel
   * reached it: the base of the links its notices carry when PUBLIC_URL is not set. Absent
   * in channels created before it was kept, and null where the request named none.
   */
  dashboardUrl?: string | null;
}

/** The base of a channel's notice links: PUBLIC_URL, else the address the channel was created through; null: relative links. */
export function linkBaseOf(channel: Pick<AlertChannel, 'dashboardUrl'>, publicUrl: string | null): string | null {
  return publicUrl ?? channel.dashboardUrl ?? null;
}

/** What a delivery tells, fixed when it is queued so that every retry sends the same thing. */
export interface Notice {
  status: NoticeStatus;
  ruleId: string | null;
  ruleName: string;
  kind: AlertKind | null;
  queue: string | null;
  task: string | null;
  value: number | null;
  threshold: number | null;
  windowSeconds: number | null;
  /** runtime_percentile compared with the week before; absent otherwise */
  relativeTo?: RelativeTo;
  firingSinceMs: number | null;
  /** resolved notices: when it resolved */
  resolvedAtMs: number | null;
  atMs: number;
}

export interface Delivery {
  id: string;
  connectionId: string;
  channelId: string;
  notice: Notice;
  createdAtMs: number;
  attempts: number;
  nextAttemptAtMs: number;
}

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

/** One attempt to send a delivery, kept in the channel's history. */
export interface DeliveryAttempt {
  deliveryId: string;
  channelId: string;
  ruleId: string | null;
  noticeStatus: NoticeStatus;
  attempt: number;
  atMs: number;
  outcome: DeliveryOutcome;
  httpStatus: number | null;
  error: string | null;
}

/** A rule's transition, for GET /api/alerts. */
export interface Transition {
  ruleId: string;
  ruleName: string;
  kind: AlertKind;
  status: 'firing' | 'resolved';
  value: number | null;
  atMs: number;
}

export function initialRuleState(): RuleState {
  return { status: 'ok', breachSinceMs: null, firingSinceMs: null, firedValue: null, changedAtMs: null };
}

/** Kinds whose condition must hold for the whole window before they fire; the others measure over the window themselves. */
export function isSustainedKind(kind: AlertKind): boolean {
  return kind === 'queue_depth';
}

/** Backoff before attempt `attempts + 1`: doubling from the first, capped. */
export function backoffMs(attempts: number): number {
  return Math.min(DELIVERY_RETRY.backoffMaxMs, DELIVERY_RETRY.firstBackoffMs * 2 ** Math.max(0, attempts - 1));
}
