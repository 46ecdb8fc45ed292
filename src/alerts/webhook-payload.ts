/**
 * What a webhook request carries: the documented JSON payload or Slack-compatible text
 * (docs/alerts.md "Payload"), the signature header over the exact body bytes, and the
 * dashboard link of what fired.
 */
import type { AlertChannel, Delivery, Notice } from '../../actors/alerts/alert-model.ts';
import { conditionText, valueText } from '../../actors/alerts/alert-text.ts';

export const SIGNATURE_HEADER = 'X-Jobwatch-Signature';
export const PAYLOAD_VERSION = 1;

export interface JsonPayload {
  version: number;
  deliveryId: string;
  event: 'alert.firing' | 'alert.resolved' | 'alert.test';
  status: Notice['status'];
  connectionId: string;
  rule: {
    id: string | null;
    name: string;
    kind: Notice['kind'];
    queue: string | null;
    task: string | null;
    threshold: number | null;
    windowSeconds: number | null;
  };
  value: number | null;
  unit: string | null;
  firingSince: string | null;
  resolvedAt: string | null;
  at: string;
  link: string;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const UNITS: Record<NonNullable<Notice['kind']>, string> = {
  failure_rate: 'fraction',
  queue_depth: 'jobs',
  worker_offline: 'seconds',
  task_missing: 'seconds',
  job_stuck: 'seconds',
  workflow_stuck: 'seconds',
  runtime_percentile: 'milliseconds',
};

/** A runtime_percentile rule against the week before measures a ratio, not a time. */
const unitOf = (notice: Notice): string | null => (notice.kind === null ? null : notice.relativeTo === 'week_before' ? 'ratio' : UNITS[notice.kind]);

/**
 * The dashboard page showing what a notice is about, under `linkBase` (the channel's, see
 * linkBaseOf in actors/alerts/alert-model.ts); relative only when there is none.
 */
export function dashboardLink(delivery: Delivery, linkBase: string | null): string {
  const { notice, connectionId } = delivery;
  const query = new URLSearchParams({ connectionId });
  let path = '/jobs';
  switch (notice.kind) {
    case 'failure_rate':
      query.set('state', 'failed');
      if (notice.queue !== null) query.set('queue', notice.queue);
      break;
    case 'queue_depth':
      path = '/queues';
      break;
    case 'worker_offline':
      path = '/workers';
      break;
    case 'task_missing':
      if (notice.task !== null) query.set('search', notice.task);
      break;
    case 'job_stuck':
      query.set('state', 'active');
      query.set('sortBy', 'startedAt');
      query.set('sortOrder', 'asc');
      if (notice.queue !== null) query.set('queue', notice.queue);
      if (notice.task !== null) query.set('search', notice.task);
      break;
    case 'workflow_stuck':
      // the stuck workflow's root, when the notice names one, else the unfinished jobs
      query.set('state', 'queued');
      if (notice.task !== null) query.set('search', notice.task);
      break;
    case 'runtime_percentile':
      path = '/task-metrics';
      if (notice.task !== null) query.set('task', notice.task);
      if (notice.queue !== null) query.set('queue', notice.queue);
      query.set('range', '7d');
      break;
    case null:
      path = '/alerts';
      query.delete('connectionId');
      break;
  }
  const search = query.toString();
  return `${linkBase ?? ''}${path}${search === '' ? '' : `?${search}`}`;
}

export function jsonPayload(delivery: Delivery, linkBase: string | null): JsonPayload {
  const { notice } = delivery;
  return {
    version: PAYLOAD_VERSION,
    deliveryId: delivery.id,
    event: `alert.${notice.status}`,
    status: notice.status,
    connectionId: delivery.connectionId,
    rule: { id: notice.ruleId, name: notice.ruleName, kind: notice.kind, queue: notice.queue, task: notice.task, threshold: notice.threshold, windowSeconds: notice.windowSeconds },
    value: notice.value,
    unit: unitOf(notice),
    firingSince: iso(notice.firingSinceMs),
    resolvedAt: iso(notice.resolvedAtMs),
    at: iso(notice.atMs)!,
    link: dashboardLink(delivery, linkBase),
  };
}

/** One line a person reads in a chat channel, then the link (Slack's `<url|label>` markup, which Mattermost also reads). */
export function slackText(delivery: Delivery, linkBase: string | null): string {
  const { notice } = delivery;
  const link = dashboardLink(delivery, linkBase);
  if (notice.status === 'test') return `:white_check_mark: jobwatch test notification (${escapeSlack(notice.ruleName)}): this channel works.\n<${link}|Open alerts>`;
  const head = notice.status === 'firing' ? ':rotating_light: *FIRING*' : ':white_check_mark: *RESOLVED*';
  return `${head} ${escapeSlack(notice.ruleName)}: ${escapeSlack(noticeText(notice))}\n<${link}|Open in jobwatch>`;
}

/** The notice's condition with the value that fired it: "failure rate > 20% over 5 min, queue emails (now 40%)". */
export function noticeText(notice: Notice): string {
  if (notice.kind === null || notice.windowSeconds === null) return 'test';
  const condition = conditionText({ kind: notice.kind, threshold: notice.threshold, windowSeconds: notice.windowSeconds, queue: notice.queue, task: notice.task, relativeTo: notice.relativeTo ?? null });
  return `${condition} (${notice.status === 'resolved' ? 'now' : 'was'} ${valueText(notice.kind, notice.value, notice.relativeTo ?? null)})`;
}

export function webhookBody(delivery: Delivery, channel: AlertChannel, linkBase: string | null): string {
  return JSON.stringify(channel.format === 'slack' ? { text: slackText(delivery, linkBase) } : jsonPayload(delivery, linkBase));
}

/** `sha256=<hex HMAC-SHA256 of the body>` keyed by the channel secret. */
export function signatureOf(secret: string, body: string): string {
  return 'sha256=' + new Bun.CryptoHasher('sha256', secret).update(body).digest('hex');
}

/** Slack reads &, < and > as markup. */
function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
