/**
 * TypeBox shapes of what records and snapshot chunks hold, shared by their checks
 * (record-shapes.ts, chunk-shapes.ts). Each names the fields the code that applies it
 * reads; a field an older version did not write is optional, so older data still reads.
 * Extra fields are allowed: they are ignored, as they always were.
 */
import { Kind, Type, TypeRegistry, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { ALERT_KINDS, CHANNEL_FORMATS, RELATIVE_TO } from '../alerts/alert-model.ts';
import { FRAMEWORKS, JOB_STATES, WORKER_EVENT_STATES, WORKER_STATES } from '../ingest/states.ts';
import { CLEANABLE_STATES, JOB_COMMAND_TYPES, QUEUE_COMMAND_TYPES, TASK_COMMAND_TYPES, WORKER_COMMAND_TYPES } from '../connection/command-types.ts';

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

export const SsoIdentityShape = Type.Object({ issuer: text(), subject: text() });
export const UserShape = Type.Object({
  id: text(),
  email: text(),
  passwordHash: text(),
  isAdmin: Type.Boolean(),
  createdAtMs: number(),
  disabled: Type.Optional(Type.Boolean()),
  sso: Type.Optional(SsoIdentityShape),
});
export const SessionShape = Type.Object({ tokenHash: text(), userId: text(), createdAtMs: number(), expiresAtMs: number() });
/** `teamId` absent: a connection from before teams */
export const ConnectionShape = Type.Object({ id: text(), name: text(), ownerId: text(), teamId: Type.Optional(text()), keyHash: text(), keyPrefix: text(), createdAtMs: number() });
export const TeamShape = Type.Object({ id: text(), name: text(), createdAtMs: number() });
export const SavedViewShape = Type.Object({
  id: text(),
  teamId: text(),
  name: text(),
  params: Type.Record(Type.String(), text()),
  createdBy: text(),
  updatedBy: text(),
  createdAtMs: number(),
  updatedAtMs: number(),
});
export const MembershipShape = Type.Object({ teamId: text(), userId: text(), role: literals(['viewer', 'operator', 'admin'] as const), sinceMs: number() });
export const PasswordLinkShape = Type.Object({ tokenHash: text(), userId: text(), purpose: literals(['invite', 'reset'] as const), createdAtMs: number(), expiresAtMs: number() });
export const AuditEntryShape = Type.Object({
  id: text(),
  atMs: number(),
  userId: nullable(text()),
  email: text(),
  address: text(),
  action: text(),
  target: nullable(text()),
  teamId: nullable(text()),
  connectionId: nullable(text()),
  outcome: literals(['success', 'denied', 'failed'] as const),
  status: number(),
  error: nullable(text()),
});

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
    // what the job was called with, as kept (normalized-event.ts): JSON texts
    args: Type.Optional(text()),
    result: Type.Optional(text()),
    progressData: Type.Optional(text()),
    logs: Type.Optional(text()),
    logLineCount: Type.Optional(number()),
    parentExternalId: Type.Optional(text()),
    rootExternalId: Type.Optional(text()),
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
  /** runtime_percentile; absent in rules saved before it */
  relativeTo: Type.Optional(nullable(literals(RELATIVE_TO))),
  // rules saved before it have none
  includePaused: Type.Optional(Type.Boolean()),
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
    relativeTo: Type.Optional(literals(RELATIVE_TO)),
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
  // format 7 on
  paused: Type.Optional(nullable(Type.Boolean())),
  pausedAtMs: Type.Optional(number()),
  createdAtMs: number(),
  metrics: Type.Unknown(),
});

/** revoke and retry before format 7; run now, delete and kill too from it */
const jobAction = literals(JOB_COMMAND_TYPES);
const commandStatus = literals(['pending', 'done', 'failed', 'unsupported', 'expired'] as const);
const OutcomeDetailsShape = Type.Record(Type.String(), Type.Union([number(), text(), Type.Boolean(), Type.Null()]));

const CleanParamsShape = Type.Union([
  Type.Object({ mode: Type.Literal('finished'), olderThanMs: number(), states: Type.Array(literals(CLEANABLE_STATES)) }),
  Type.Object({ mode: Type.Literal('waiting') }),
]);

/** A command on a queue, a worker or a task (format 7 on), as the agent receives it. */
export const ControlCommandShape = Type.Union([
  Type.Object({ id: text(), type: literals(QUEUE_COMMAND_TYPES), queue: text(), createdAtMs: number(), params: Type.Optional(Type.Union([CleanParamsShape, Type.Object({ concurrency: nullable(number()) })])) }),
  Type.Object({ id: text(), type: literals(WORKER_COMMAND_TYPES), workerId: text(), hostname: text(), pid: nullable(number()), createdAtMs: number(), params: Type.Optional(Type.Object({ delta: number() })) }),
  Type.Object({ id: text(), type: literals(TASK_COMMAND_TYPES), name: text(), queue: nullable(text()), createdAtMs: number(), params: Type.Optional(Type.Object({ rate: nullable(text()) })) }),
]);

export const CommandShape = Type.Union([
  Type.Object({ id: text(), type: jobAction, jobId: text(), externalId: text(), name: text(), queue: nullable(text()), createdAtMs: number() }),
  ControlCommandShape,
]);

export const CommandOutcomeShape = Type.Object({
  jobId: text(),
  commandId: text(),
  type: jobAction,
  status: commandStatus,
  reason: nullable(text()),
  createdAtMs: number(),
  completedAtMs: nullable(number()),
  // format 5 on
  entryAtMs: Type.Optional(number()),
  priorState: Type.Optional(nullable(literals(JOB_STATES))),
  // format 7 on
  stateEntry: Type.Optional(nullable(literals(JOB_STATES))),
  details: Type.Optional(nullable(OutcomeDetailsShape)),
});

export const ControlOutcomeShape = Type.Object({
  command: ControlCommandShape,
  status: commandStatus,
  reason: nullable(text()),
  details: nullable(OutcomeDetailsShape),
  completedAtMs: nullable(number()),
});

const ControlSupportShape = Type.Union([Type.Object({ supported: Type.Literal(true) }), Type.Object({ supported: Type.Literal(false), reason: text() })]);
export const ControlsShape = Type.Record(Type.String(), ControlSupportShape);
export const CapabilitiesShape = Type.Object({ framework, agentVersion: text(), reportedAtMs: number(), controls: ControlsShape });

export const AckedOutcomeShape = Type.Object({ id: text(), status: literals(['done', 'failed', 'unsupported'] as const), reason: nullable(text()), details: Type.Optional(OutcomeDetailsShape) });

export { framework as frameworkShape };

export { jobAction };

/** A marker on the task metrics' charts (actors/metrics/markers.ts). */
export const MarkerShape = Type.Object({ id: text(), name: text(), atMs: number(), createdAtMs: number(), addedBy: text() });
