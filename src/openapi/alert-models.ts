/**
 * TypeBox models of the alert routes' answers, for the OpenAPI document (closed, like
 * response-models.ts; the `same` checks at the end fail the type check when a view and
 * its model disagree).
 */
import { Type, type Static } from '@sinclair/typebox';
import { ALERT_KINDS, CHANNEL_FORMATS, RELATIVE_TO } from '../../actors/alerts/alert-model.ts';
import type { AlertsOverview, DescribedMeasure, PublicAlert, PublicChannel, PublicDeliveryAttempt, PublicRule } from '../../actors/services/alert-service.ts';
import { literals } from '../routes/list-params.ts';
import { closed, nullable, same, time } from './response-models.ts';


export const DeliveryAttempt = closed({
  deliveryId: Type.String({ description: 'the same in every attempt of one delivery, and in the payload' }),
  ruleId: nullable(Type.String({ description: 'null for a test' })),
  status: literals(['firing', 'resolved', 'test'] as const),
  attempt: Type.Integer({ minimum: 0 }),
  at: time(),
  outcome: literals(['delivered', 'retrying', 'failed'] as const, { description: '`retrying`: failed, tried again later; `failed`: given up' }),
  httpStatus: nullable(Type.Integer()),
  error: nullable(Type.String()),
});

export const AlertChannel = closed({
  id: Type.String(),
  connectionId: Type.String(),
  name: Type.String(),
  url: Type.String(),
  format: literals(CHANNEL_FORMATS),
  createdAt: time(),
  linkBase: nullable(
    Type.String({ description: "where its notices' links point: PUBLIC_URL when set, else the dashboard address (scheme, host, port) the channel was created through; null: relative links" }),
  ),
  pending: Type.Integer({ minimum: 0, description: 'deliveries waiting for their next attempt' }),
  deliveries: Type.Array(DeliveryAttempt, { maxItems: 100, description: 'the last attempts, newest first' }),
});
export const AlertChannelList = closed({ data: Type.Array(AlertChannel) });
export const CreatedAlertChannel = closed({
  channel: AlertChannel,
  secret: Type.String({ pattern: '^whsec_', description: 'signs every request (X-Jobwatch-Signature); shown this once' }),
});

export const AlertMeasure = closed({
  value: nullable(Type.Number({ description: 'failure_rate: a fraction; queue_depth: jobs; runtime_percentile: ms, or against the week before a ratio; the others: seconds. Null: nothing to measure' })),
  breached: Type.Boolean({ description: 'the condition holds now' }),
  text: Type.String({ description: 'the value in words ("40%", "12 jobs", "5 min"; "no data"; "paused")' }),
  paused: Type.Optional(Type.Literal(true, { description: 'queue_depth: every queue the rule looks at is paused, and the rule leaves paused queues out' })),
});

export const AlertRule = closed({
  id: Type.String(),
  connectionId: Type.String(),
  name: Type.String(),
  kind: literals(ALERT_KINDS),
  queue: nullable(Type.String()),
  task: nullable(Type.String()),
  threshold: nullable(Type.Number()),
  windowSeconds: Type.Integer(),
  relativeTo: nullable(literals(RELATIVE_TO)),
  channelIds: Type.Array(Type.String()),
  includePaused: Type.Boolean({ description: 'queue_depth: paused queues are measured too (by default they do not fire)' }),
  createdAt: time(),
  updatedAt: time(),
  status: literals(['ok', 'firing', 'resolved'] as const),
  firingSince: nullable(time('when it began firing (the last time, if resolved since)')),
  firedValue: nullable(Type.Number({ description: 'the value that fired it' })),
  changedAt: nullable(time('the last transition')),
  condition: Type.String({ description: 'the condition in words' }),
  current: AlertMeasure,
});
export const AlertRuleList = closed({ data: Type.Array(AlertRule) });

const Alert = closed({
  ruleId: Type.String(),
  ruleName: Type.String(),
  connectionId: Type.String(),
  kind: literals(ALERT_KINDS),
  status: literals(['firing', 'resolved'] as const),
  value: nullable(Type.Number()),
  at: time(),
});
export const AlertsOverviewReply = closed({
  firing: Type.Array(Alert, { description: 'rules firing now; `at` is when each began' }),
  recent: Type.Array(Alert, { maxItems: 100, description: 'transitions, newest first' }),
});

export const TestDeliveryReply = closed({
  deliveryId: Type.String(),
  /** the first attempt; null while it waits (`waiting`) or when the channel was deleted meanwhile */
  attempt: nullable(DeliveryAttempt),
  waiting: Type.Boolean({
    description: "true when the connection's own sends in flight (at most 4) held the test past 5 s: it is sent in its turn, and the channel's history shows it",
  }),
});

same<PublicDeliveryAttempt, Static<typeof DeliveryAttempt>>(true);
same<PublicChannel, Static<typeof AlertChannel>>(true);
same<PublicRule, Static<typeof AlertRule>>(true);
same<DescribedMeasure, Static<typeof AlertMeasure>>(true);
same<PublicAlert, Static<typeof Alert>>(true);
same<AlertsOverview, Static<typeof AlertsOverviewReply>>(true);
