/**
 * TypeBox model of one ingest event, compiled once. Speed matters here (1,000 events
 * per request): TypeBox's own `Type.Integer` (not Elysia's transforming `t.Integer`)
 * and an anchored RFC 3339 pattern registered as a format instead of a date parser.
 * Optional fields accept `null` as "absent" because SDKs in Python serialize None.
 */
import { FormatRegistry, Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isValidTimestamp } from './timestamp-rules.ts';
import { FRAMEWORKS, JOB_STATES, WORKER_EVENT_STATES } from './states.ts';
import { LOG_LINES_PER_EVENT_MAX } from './job-payload.ts';

FormatRegistry.Set('rfc3339', isValidTimestamp);

export const FIELD_LIMITS = {
  externalIdChars: 512,
  nameChars: 1024,
  queueChars: 255,
  workerIdChars: 512,
  errorChars: 10_000,
  stacktraceChars: 50_000,
  hostnameChars: 255,
  queuesPerWorkerMax: 256,
  countMax: 1_000_000_000,
} as const;

const optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const literals = <T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> => Type.Union(values.map((value) => Type.Literal(value)));
const timestamp = () => Type.String({ format: 'rfc3339' });
const count = () => Type.Integer({ minimum: 0, maximum: FIELD_LIMITS.countMax });
const text = (maxLength: number, minLength = 1) => Type.String({ minLength, maxLength });
// Stryker disable next-line ObjectLiteral: TypeBox objects allow other properties unless told not to; said here for the reader
const jsonObject = (description?: string) => Type.Object({}, { additionalProperties: true, ...(description === undefined ? {} : { description }) });

export const JobPayload = Type.Object({
  externalId: text(FIELD_LIMITS.externalIdChars),
  name: text(FIELD_LIMITS.nameChars),
  queue: optional(text(FIELD_LIMITS.queueChars)),
  state: literals(JOB_STATES),
  previousState: optional(literals(JOB_STATES)),
  workerId: optional(text(FIELD_LIMITS.workerIdChars)),
  attempt: optional(Type.Integer({ minimum: 1, maximum: FIELD_LIMITS.countMax })),
  maxRetries: optional(count()),
  progress: optional(
    Type.Union([Type.Number({ minimum: 0, maximum: 1 }), jsonObject('progress as an object (BullMQ allows any): kept as it came, masked, cut past 16 KiB; `percent` (0-100), `progress` (0-1) or done of `total` give the bar')]),
  ),
  error: optional(text(FIELD_LIMITS.errorChars, 0)),
  stacktrace: optional(text(FIELD_LIMITS.stacktraceChars, 0)),
  createdAt: optional(timestamp()),
  startedAt: optional(timestamp()),
  completedAt: optional(timestamp()),
  extensions: optional(jsonObject()),
  parentExternalId: optional(
    Type.String({
      minLength: 1,
      maxLength: FIELD_LIMITS.externalIdChars,
      description: "The job system's id of the job that started this one (a Celery task's parent, a BullMQ flow's parent job), in the same connection; jobwatch resolves it to the parent's `parentId`, also when the parent arrives later",
    }),
  ),
  rootExternalId: optional(
    Type.String({
      minLength: 1,
      maxLength: FIELD_LIMITS.externalIdChars,
      description: "The job system's id of the first job of the workflow (a Celery task's root), in the same connection; left out, the root is found by following the parents",
    }),
  ),
  args: optional(Type.Unknown({ description: "what the job was called with, any JSON (Celery: {args, kwargs}; BullMQ: job.data; Sidekiq: the args array); masked by key and cut past JOB_ARGS_KB on ingest" })),
  result: optional(Type.Unknown({ description: "the run's result, any JSON; masked by key and cut past JOB_RESULT_KB on ingest" })),
  logs: optional(
    Type.Array(Type.String(), {
      maxItems: LOG_LINES_PER_EVENT_MAX,
      description: "lines to append to the job's log, oldest first; a line past 16,384 characters is cut; the newest lines are kept within JOB_LOG_LINES and JOB_LOG_KB",
    }),
  ),
});

export const WorkerPayload = Type.Object({
  externalId: text(FIELD_LIMITS.externalIdChars),
  hostname: text(FIELD_LIMITS.hostnameChars),
  pid: optional(Type.Integer({ minimum: 0, maximum: 2 ** 32 })),
  state: literals(WORKER_EVENT_STATES),
  concurrency: optional(count()),
  activeJobs: optional(count()),
  queues: optional(Type.Array(text(FIELD_LIMITS.queueChars), { maxItems: FIELD_LIMITS.queuesPerWorkerMax })),
  metadata: optional(jsonObject()),
});

export const QueuePayload = Type.Object({
  name: text(FIELD_LIMITS.queueChars),
  depth: count(),
  consumers: optional(count()),
  extensions: optional(
    jsonObject(
      'Framework-specific data of the queue now (BullMQ state counts, Sidekiq latency): at most 64 KB serialized, 8 levels deep, ' +
        "no `__proto__`, `constructor` or `prototype` keys. Replaces the previous snapshot's; left out, the previous one stays",
    ),
  ),
});

/** The envelope fields every event has; the payload is checked by its own schema. */
export const EventEnvelope = Type.Object({
  type: Type.String({ maxLength: 64 }),
  timestamp: timestamp(),
  framework: literals(FRAMEWORKS),
  connectionId: Type.String({ maxLength: 64 }),
});

export const checkEventEnvelope = TypeCompiler.Compile(EventEnvelope);
export const checkJobPayload = TypeCompiler.Compile(JobPayload);
export const checkWorkerPayload = TypeCompiler.Compile(WorkerPayload);
export const checkQueuePayload = TypeCompiler.Compile(QueuePayload);

export type JobPayloadInput = typeof JobPayload.static;
export type WorkerPayloadInput = typeof WorkerPayload.static;
export type QueuePayloadInput = typeof QueuePayload.static;
