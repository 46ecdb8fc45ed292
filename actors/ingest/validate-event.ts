/**
 * Validates one raw ingest event on its own and normalizes it. A failing event yields
 * a per-event error (decisions: VALIDATION_ERROR, CONNECTION_MISMATCH,
 * UNSUPPORTED_EVENT_TYPE); nothing of it is stored.
 */
import type { FieldErrors } from '../domain-error.ts';
import {
  checkEventEnvelope,
  checkJobPayload,
  checkQueuePayload,
  checkWorkerPayload,
  FIELD_LIMITS,
  type JobPayloadInput,
  type QueuePayloadInput,
  type WorkerPayloadInput,
} from './event-schema.ts';
import { jsonObjectProblem } from './json-object-limits.ts';
import { PAYLOAD_LIMIT_DEFAULTS, PayloadRules, PROGRESS_DATA_BYTES_MAX, progressFractionOf } from './job-payload.ts';
import type { JobEvent, NormalizedEvent, QueueEvent, WorkerEvent } from './normalized-event.ts';
import { collectSchemaErrors } from './schema-errors.ts';
import { futureTimestampMessage, timestampMs } from './timestamp-rules.ts';
import { ILL_FORMED_MESSAGE, illFormedFieldPath } from './well-formed-strings.ts';
import { EVENT_TYPES, type EventType, type Framework } from './states.ts';

export type EventErrorCode =
  | 'VALIDATION_ERROR'
  | 'CONNECTION_MISMATCH'
  | 'UNSUPPORTED_EVENT_TYPE'
  // per-connection bounds, decided by the connection actor (see tenant-limits.ts)
  | 'QUEUE_LIMIT_EXCEEDED'
  | 'WORKER_LIMIT_EXCEEDED'
  | 'STORAGE_LIMIT_EXCEEDED'
  | 'DAILY_BYTES_EXCEEDED';

export interface EventError {
  code: EventErrorCode;
  message: string;
  details?: FieldErrors;
}

export type EventVerdict = { ok: true; event: NormalizedEvent } | { ok: false; error: EventError };

const PAYLOAD_OF: Record<EventType, 'job' | 'worker' | 'queue'> = {
  job_state_change: 'job',
  worker_state_change: 'worker',
  queue_snapshot: 'queue',
};
const PAYLOAD_KEYS = ['job', 'worker', 'queue'] as const;

const DEFAULT_PAYLOAD_RULES = new PayloadRules(PAYLOAD_LIMIT_DEFAULTS);

/**
 * `notAfterMs`: the latest time any timestamp of the event may name (server clock +
 * tolerance); `payload`: how arguments, results, progress objects and log lines are masked
 * and capped (the connection's).
 */
export function validateEvent(raw: unknown, connectionId: string, notAfterMs: number, payload: PayloadRules = DEFAULT_PAYLOAD_RULES): EventVerdict {
  const verdict = validateShape(raw, connectionId, payload);
  if (!verdict.ok) return verdict;
  const future = futureTimestampErrors(verdict.event, notAfterMs);
  return future === null ? verdict : invalid(future);
}

function validateShape(raw: unknown, connectionId: string, payload: PayloadRules): EventVerdict {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return invalid({ '(event)': ['must be an object'] });
  }
  const event = raw as Record<string, unknown>;
  if (!checkEventEnvelope.Check(raw)) {
    const details: FieldErrors = {};
    collectSchemaErrors(checkEventEnvelope, event, '', details);
    return invalid(details);
  }
  const type = event.type as string;
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    return {
      ok: false,
      error: { code: 'UNSUPPORTED_EVENT_TYPE', message: `event type '${type}' is not supported; use one of ${EVENT_TYPES.join(', ')}` },
    };
  }
  if (event.connectionId !== connectionId) {
    return {
      ok: false,
      error: { code: 'CONNECTION_MISMATCH', message: "connectionId does not match the API key's connection" },
    };
  }
  const payloadKey = PAYLOAD_OF[type as EventType];
  const strayKeys = PAYLOAD_KEYS.filter((key) => key !== payloadKey && event[key] !== undefined && event[key] !== null);
  if (strayKeys.length > 0) {
    return invalid(Object.fromEntries(strayKeys.map((key) => [key, [`must not be present on a ${type} event`]])));
  }
  const rules = payload;
  const body = event[payloadKey];
  if (body === undefined || body === null) {
    return invalid({ [payloadKey]: [`is required for a ${type} event`] });
  }
  const atMs = timestampMs(event.timestamp as string);
  const framework = event.framework as Framework;
  switch (payloadKey) {
    case 'job':
      return normalizeJob(body, atMs, framework, rules);
    case 'worker':
      return normalizeWorker(body, atMs, framework);
    case 'queue':
      return normalizeQueue(body, atMs, framework);
  }
}

const TIMESTAMP_FIELDS = [
  ['atMs', 'timestamp'],
  ['createdAtMs', 'job.createdAt'],
  ['startedAtMs', 'job.startedAt'],
  ['completedAtMs', 'job.completedAt'],
] as const;

/** A far-future time would pin a job's state and keep it past retention. */
function futureTimestampErrors(event: NormalizedEvent, notAfterMs: number): FieldErrors | null {
  let details: FieldErrors | null = null;
  for (const [key, field] of TIMESTAMP_FIELDS) {
    const ms = (event as Partial<Record<(typeof TIMESTAMP_FIELDS)[number][0], number>>)[key];
    if (ms === undefined || ms <= notAfterMs) continue;
    (details ??= {})[field] = [futureTimestampMessage(notAfterMs)];
  }
  return details;
}

function invalid(details: FieldErrors): EventVerdict {
  return { ok: false, error: { code: 'VALIDATION_ERROR', message: 'event failed validation', details } };
}

function failedSchema(check: Parameters<typeof collectSchemaErrors>[0], payload: unknown, prefix: string): EventVerdict {
  const details: FieldErrors = {};
  collectSchemaErrors(check, payload, prefix, details);
  return invalid(details);
}

// Only the fields that are stored: unknown extra fields are dropped, and their depth is unbounded.
const JOB_STRING_FIELDS = ['externalId', 'name', 'queue', 'workerId', 'error', 'stacktrace', 'extensions', 'parentExternalId', 'rootExternalId'] as const;
const WORKER_STRING_FIELDS = ['externalId', 'hostname', 'queues', 'metadata'] as const;
const QUEUE_STRING_FIELDS = ['name', 'extensions'] as const;

const parseTime = (value: string | null | undefined): number | undefined => (value == null ? undefined : timestampMs(value));

function normalizeJob(payload: unknown, atMs: number, framework: Framework, rules: PayloadRules): EventVerdict {
  if (!checkJobPayload.Check(payload)) return failedSchema(checkJobPayload, payload, 'job');
  const job = payload as JobPayloadInput;
  if (job.extensions != null) {
    const problem = jsonObjectProblem(job.extensions);
    if (problem !== null) return invalid({ 'job.extensions': [problem] });
  }
  const illFormed = illFormedFieldPath(job, JOB_STRING_FIELDS, 'job');
  if (illFormed !== null) return invalid({ [illFormed]: [ILL_FORMED_MESSAGE] });
  const normalized: JobEvent = { kind: 'job', atMs, framework, externalId: job.externalId, name: job.name, state: job.state };
  if (job.queue != null) normalized.queue = job.queue;
  if (job.workerId != null) normalized.workerId = job.workerId;
  if (job.attempt != null) normalized.attempt = job.attempt;
  if (job.maxRetries != null) normalized.maxRetries = job.maxRetries;
  normalizeProgress(job.progress, normalized, rules);
  if (job.error != null) normalized.error = job.error;
  if (job.stacktrace != null) normalized.stacktrace = job.stacktrace;
  const createdAtMs = parseTime(job.createdAt);
  if (createdAtMs !== undefined) normalized.createdAtMs = createdAtMs;
  const startedAtMs = parseTime(job.startedAt);
  if (startedAtMs !== undefined) normalized.startedAtMs = startedAtMs;
  const completedAtMs = parseTime(job.completedAt);
  if (completedAtMs !== undefined) normalized.completedAtMs = completedAtMs;
  if (job.extensions != null) normalized.extensions = job.extensions;
  if (job.args != null) normalized.args = rules.text(job.args, rules.limits.argsBytesMax);
  if (job.result != null) normalized.result = rules.text(job.result, rules.limits.resultBytesMax);
  if (job.logs != null && job.logs.length > 0) {
    normalized.logs = rules.logLines(job.logs);
    normalized.logLineCount = job.logs.length;
  }
  const extensions: Record<string, unknown> | undefined = job.extensions ?? undefined;
  const parent = relationOf(job.parentExternalId, extensions?.parentId, job.externalId);
  if (parent !== undefined) normalized.parentExternalId = parent;
  const root = relationOf(job.rootExternalId, extensions?.rootId, job.externalId);
  if (root !== undefined) normalized.rootExternalId = root;
  return { ok: true, event: normalized };
}

/**
 * A job's parent or root: the field, else the extension key agents sent before the field
 * existed (`extensions.parentId`, `extensions.rootId`: the job system's ids) when it is a
 * string an externalId could be. A job is not its own parent or root: Celery names a root
 * task as its own root.
 */
function relationOf(field: string | null | undefined, extension: unknown, externalId: string): string | undefined {
  const named = field ?? (typeof extension === 'string' && extension.length > 0 && extension.length <= FIELD_LIMITS.externalIdChars ? extension : undefined);
  return named === undefined || named === externalId ? undefined : named;
}

/** A number is the fraction itself; an object is kept as it came (masked, capped), its fraction read from it when it says one. */
function normalizeProgress(progress: JobPayloadInput['progress'], normalized: JobEvent, rules: PayloadRules): void {
  if (progress == null) return;
  if (typeof progress === 'number') {
    normalized.progress = progress;
    return;
  }
  normalized.progressData = rules.text(progress, PROGRESS_DATA_BYTES_MAX);
  const fraction = progressFractionOf(progress);
  if (fraction !== undefined) normalized.progress = fraction;
}

function normalizeWorker(payload: unknown, atMs: number, framework: Framework): EventVerdict {
  if (!checkWorkerPayload.Check(payload)) return failedSchema(checkWorkerPayload, payload, 'worker');
  const worker = payload as WorkerPayloadInput;
  if (worker.metadata != null) {
    const problem = jsonObjectProblem(worker.metadata);
    if (problem !== null) return invalid({ 'worker.metadata': [problem] });
  }
  const illFormed = illFormedFieldPath(worker, WORKER_STRING_FIELDS, 'worker');
  if (illFormed !== null) return invalid({ [illFormed]: [ILL_FORMED_MESSAGE] });
  const normalized: WorkerEvent = {
    kind: 'worker',
    atMs,
    framework,
    externalId: worker.externalId,
    hostname: worker.hostname,
    state: worker.state,
  };
  if (worker.pid != null) normalized.pid = worker.pid;
  if (worker.concurrency != null) normalized.concurrency = worker.concurrency;
  if (worker.activeJobs != null) normalized.activeJobs = worker.activeJobs;
  if (worker.queues != null) normalized.queues = worker.queues;
  if (worker.metadata != null) normalized.metadata = worker.metadata;
  return { ok: true, event: normalized };
}

function normalizeQueue(payload: unknown, atMs: number, framework: Framework): EventVerdict {
  if (!checkQueuePayload.Check(payload)) return failedSchema(checkQueuePayload, payload, 'queue');
  const queue = payload as QueuePayloadInput;
  if (queue.extensions != null) {
    const problem = jsonObjectProblem(queue.extensions);
    if (problem !== null) return invalid({ 'queue.extensions': [problem] });
  }
  const illFormed = illFormedFieldPath(queue, QUEUE_STRING_FIELDS, 'queue');
  if (illFormed !== null) return invalid({ [illFormed]: [ILL_FORMED_MESSAGE] });
  const normalized: QueueEvent = { kind: 'queue', atMs, framework, name: queue.name, depth: queue.depth };
  if (queue.consumers != null) normalized.consumers = queue.consumers;
  if (queue.extensions != null) normalized.extensions = queue.extensions;
  return { ok: true, event: normalized };
}
