/**
 * TypeBox shapes of what records and snapshot chunks hold, shared by their checks
 * (record-shapes.ts, chunk-shapes.ts). Each names the fields the code that applies it
 * reads; a field an older version did not write is optional, so older data still reads.
 * Extra fields are allowed: they are ignored, as they always were.
 */
import { Kind, Type, TypeRegistry, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { ALERT_KINDS, CHANNEL_FORMATS } from '../alerts/alert-model.ts';
import { FRAMEWORKS, JOB_STATES, WORKER_EVENT_STATES, WORKER_STATES } from '../ingest/states.ts';

export const literals = <T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> => Type.Union(values.map((value) => Type.Literal(value)));
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const text = () => Type.String();
/**
 * Any JavaScript number: stored values hold NaN and -Infinity for "none" in places (a
 * queue never snapshotted), which TypeBox's own number refuses.
 */
TypeRegistry.Set('StoredNumber', (_schema, value) => typeof value === 'number');
export const number = () => Type.Unsafe<number>({ [Kind]: 'StoredNumber', title: 'number' });
export const freeObject = () => Type.Object({});

const framework = literals(FRAMEWORKS);

export const UserShape = Type.Object({ id: text(), email: text(), passwordHash: text(), isAdmin: Type.Boolean(), createdAtMs: number() });
export const SessionShape = Type.Object({ tokenHash: text(), userId: text(), createdAtMs: number(), expiresAtMs: number() });
export const ConnectionShape = Type.Object({ id: text(), name: text(), ownerId: text(), keyHash: text(), keyPrefix: text(), createdAtMs: number() });

/** An accepted event as an ingest record holds it (actors/ingest/normalized-event.ts). */
export const EVENT_SHAPES = {
  job: Type.Object({
    kind: Type.Literal('job'),
    atMs: number(),
    framework,
    newJobId: Type.Optional(text()),
    newQueueId: Type.Optional(text()),
    externalId: text(),
    name: text(),
    state: literals(JOB_STATES),
    queue: Type.Optional(text()),
    workerId: Type.Optional(text()),
    attempt: Type.Optional(number()),
    maxRetries: Type.Optional(number()),
    progress: Type.Optional(number()),
    error: Type.Optional(text()),
    stacktrace: Type.Optional(text()),
    createdAtMs: Type.Optional(number()),
    startedAtMs: Type.Optional(number()),
    completedAtMs: Type.Optional(number()),
    extensions: Type.Optional(freeObject()),
  }),
  worker: Type.Object({
    kind: Type.Literal('worker'),
    atMs: number(),
    framework,
    newWorkerId: Type.Optional(text()),
    externalId: text(),
    hostname: text(),
    state: literals(WORKER_EVENT_STATES),
    pid: Type.Optional(number()),
    concurrency: Type.Optional(number()),
    activeJobs: Type.Optional(number()),
    queues: Type.Optional(Type.Array(text())),
    metadata: Type.Optional(freeObject()),
  }),
  queue: Type.Object({
    kind: Type.Literal('queue'),
    atMs: number(),
    framework,
    newQueueId: Type.Optional(text()),
    name: text(),
    depth: number(),
    consumers: Type.Optional(number()),
    extensions: Type.Optional(freeObject()),
  }),
};

export const AlertRuleShape = Type.Object({
  id: text(),
  connectionId: text(),
  name: text(),
  kind: literals(ALERT_KINDS),
  queue: nullable(text()),
  task: nullable(text()),
  threshold: nullable(number()),
  windowSeconds: number(),
  channelIds: Type.Array(text()),
  createdAtMs: number(),
  updatedAtMs: number(),
});

export const RuleStateShape = Type.Object({
  status: literals(['ok', 'firing', 'resolved'] as const),
  breachSinceMs: nullable(number()),
  firingSinceMs: nullable(number()),
  firedValue: nullable(number()),
  changedAtMs: nullable(number()),
});

export const AlertChannelShape = Type.Object({
  id: text(),
  connectionId: text(),
  name: text(),
  url: text(),
  format: literals(CHANNEL_FORMATS),
  secret: text(),
  createdAtMs: number(),
});

const noticeStatus = literals(['firing', 'resolved', 'test'] as const);

export const DeliveryShape = Type.Object({
  id: text(),
  connectionId: text(),
  channelId: text(),
  notice: Type.Object({
    status: noticeStatus,
    ruleId: nullable(text()),
    ruleName: text(),
    kind: nullable(literals(ALERT_KINDS)),
    queue: nullable(text()),
    task: nullable(text()),
    value: nullable(number()),
    threshold: nullable(number()),
    windowSeconds: nullable(number()),
    firingSinceMs: nullable(number()),
    resolvedAtMs: nullable(number()),
    atMs: number(),
  }),
  createdAtMs: number(),
  attempts: number(),
  nextAttemptAtMs: number(),
});

export const deliveryOutcome = literals(['delivered', 'retrying', 'failed'] as const);

export const DeliveryAttemptShape = Type.Object({
  deliveryId: text(),
  channelId: text(),
  ruleId: nullable(text()),
  noticeStatus,
  attempt: number(),
  atMs: number(),
  outcome: deliveryOutcome,
  httpStatus: nullable(number()),
  error: nullable(text()),
});

export const TransitionShape = Type.Object({
  ruleId: text(),
  ruleName: text(),
  kind: literals(ALERT_KINDS),
  status: literals(['firing', 'resolved'] as const),
  value: nullable(number()),
  atMs: number(),
});

export const WorkerShape = Type.Object({
  id: text(),
  connectionId: text(),
  externalId: text(),
  framework,
  hostname: text(),
  pid: nullable(number()),
  state: literals(WORKER_STATES),
  lastHeartbeatMs: nullable(number()),
  lastEventMs: number(),
  concurrency: nullable(number()),
  queues: Type.Array(text()),
  metadata: freeObject(),
  createdAtMs: number(),
  rate: Type.Unknown(),
});

export const QueueShape = Type.Object({
  id: text(),
  connectionId: text(),
  name: text(),
  framework,
  depth: nullable(number()),
  consumers: nullable(number()),
  extensions: Type.Optional(nullable(freeObject())),
  lastSnapshotMs: number(),
  lastSeenMs: Type.Optional(number()),
  createdAtMs: number(),
  metrics: Type.Unknown(),
});

const jobAction = literals(['revoke', 'retry'] as const);

export const CommandShape = Type.Object({ id: text(), type: jobAction, jobId: text(), externalId: text(), name: text(), queue: nullable(text()), createdAtMs: number() });

export const CommandOutcomeShape = Type.Object({
  jobId: text(),
  commandId: text(),
  type: jobAction,
  status: literals(['pending', 'done', 'failed', 'expired'] as const),
  reason: nullable(text()),
  createdAtMs: number(),
  completedAtMs: nullable(number()),
  // format 5 on
  entryAtMs: Type.Optional(number()),
  priorState: Type.Optional(nullable(literals(JOB_STATES))),
});

export { jobAction };
