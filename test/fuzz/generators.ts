/**
 * fast-check generators for the fuzz suite. Mostly near-valid input: a valid event or
 * query with one or two fields replaced by an odd value (edge lengths, odd unicode, odd
 * numbers, deep extension objects), so that most requests get past the envelope check and
 * reach validation, merging, indexes, quotas and the log.
 */
import fc from 'fast-check';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { FIELD_LIMITS } from '../../actors/ingest/event-schema.ts';
import { FRAMEWORKS, JOB_STATES, WORKER_EVENT_STATES, WORKER_STATES } from '../../actors/ingest/states.ts';
import { TIME_RANGES } from '../../actors/metrics/queue-metrics.ts';

const HOUR_MS = 3_600_000;

/** Strings that break naive code: lone surrogates, combining marks, RTL, NUL, emoji, long runs. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff x', 'e\u0301', '\u202ertl', '🧪'.repeat(3), '<script>', '__proto__', 'constructor', '%00', '\\', '"'),
  fc.constantFrom(FIELD_LIMITS.queueChars, FIELD_LIMITS.externalIdChars, FIELD_LIMITS.nameChars).chain((limit) =>
    fc.constantFrom(limit - 1, limit, limit + 1).map((length) => 'x'.repeat(length)),
  ),
);

/** Numbers at the edges of what the schema and JSON allow. */
export const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 0.5, 1e-320, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, 1e308, -1e308, FIELD_LIMITS.countMax, FIELD_LIMITS.countMax + 1),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** JSON objects around the depth limit of extensions and metadata (8 levels), and far past it. */
export const deepObject: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 10 }) }, fc.integer({ min: 11, max: 200 })), fc.jsonValue({ maxDepth: 2 }), oddString)
  .map(([depth, leaf, key]) => {
    let value: unknown = leaf;
    for (let level = 0; level < depth; level++) value = level % 2 === 0 ? { [key || 'k']: value } : [value];
    return { nested: value };
  });

/** Any JSON-ish value, for a field that should be something else. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: oddString },
  { weight: 3, arbitrary: oddNumber },
  fc.constantFrom(null, true, false, [], {}, [[]]),
  deepObject,
  fc.jsonValue({ maxDepth: 3 }),
);

const timestampAround = (nowMs: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: -48 * HOUR_MS, max: HOUR_MS }).map((offset) => new Date(nowMs + offset).toISOString()) },
    fc.constantFrom('2026-11-21T10:00:00+14:00', '2026-11-21T10:00:00.123456789Z', '2026-11-21 10:00:00Z', '2026-02-30T10:00:00Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-11-21T10:00:00', 'yesterday'),
  );

/** A small id space so that events for the same job meet (merging, out-of-order states). */
const externalId = fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 30 }).map((n) => `job-${n}`) }, oddString);

const jobPayload = (nowMs: number) =>
  fc.record(
    {
      externalId,
      name: fc.constantFrom('tasks.add', 'tasks.send_email', 'reports.build'),
      queue: fc.constantFrom('default', 'emails', null),
      state: fc.constantFrom(...JOB_STATES),
      workerId: fc.constantFrom('w1', 'w2', null),
      attempt: fc.integer({ min: 1, max: 5 }),
      progress: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom({ percent: 40, stage: 'upload' }, { done: 3, total: 4 }, { note: 'no fraction' })),
      error: fc.constantFrom(null, 'boom', ''),
      // what the job was called with and gave back, and its log: any JSON, masked by key on ingest
      args: fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 3 }), fc.constant({ kwargs: { invoice_id: 'INV-7', password: 'hunter2' } })),
      result: fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 2 })),
      logs: fc.oneof(fc.constant(null), fc.array(fc.string({ maxLength: 30 }), { maxLength: 4 })),
      startedAt: timestampAround(nowMs),
      completedAt: timestampAround(nowMs),
      extensions: fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 2 }).map((value) => ({ value })), deepObject),
      // parents and roots among the same jobs: links made, changed and cut in any order
      parentExternalId: fc.oneof(fc.constant(null), externalId),
      rootExternalId: fc.oneof(fc.constant(null), externalId),
    },
    { requiredKeys: ['externalId', 'name', 'state'] },
  );

const workerPayload = fc.record(
  {
    externalId: fc.constantFrom('w1', 'w2', 'w3'),
    hostname: fc.constantFrom('host-a', 'host-b'),
    state: fc.constantFrom(...WORKER_EVENT_STATES),
    pid: fc.integer({ min: 0, max: 2 ** 32 }),
    concurrency: fc.integer({ min: 0, max: 64 }),
    activeJobs: fc.integer({ min: 0, max: 64 }),
    queues: fc.array(fc.constantFrom('default', 'emails'), { maxLength: 3 }),
    metadata: fc.oneof(fc.constant(null), deepObject),
  },
  { requiredKeys: ['externalId', 'hostname', 'state'] },
);

const queuePayload = fc.record(
  {
    name: fc.constantFrom('default', 'emails', 'bulk'),
    depth: fc.integer({ min: 0, max: FIELD_LIMITS.countMax }),
    consumers: fc.integer({ min: 0, max: 10 }),
    extensions: fc.oneof(fc.constant(null), deepObject),
  },
  { requiredKeys: ['name', 'depth'] },
);

/** A valid event of any type for `connectionId`. */
export function validEvent(connectionId: string, nowMs: number): fc.Arbitrary<Record<string, unknown>> {
  const envelope = { timestamp: timestampAround(nowMs), framework: fc.constantFrom(...FRAMEWORKS), connectionId: fc.constant(connectionId) };
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ type: fc.constant('job_state_change'), ...envelope, job: jobPayload(nowMs) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('worker_state_change'), ...envelope, worker: workerPayload }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('queue_snapshot'), ...envelope, queue: queuePayload }) },
  );
}

/** Replaces (or removes) the value at a path of a plain JSON tree; a path is a list of keys. */
function mutateAt(event: Record<string, unknown>, path: string[], value: unknown, remove: boolean): Record<string, unknown> {
  const copy: Record<string, unknown> = structuredClone(event);
  let parent: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    const next = parent[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) return copy;
    parent = next as Record<string, unknown>;
  }
  const last = path[path.length - 1]!;
  if (remove) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** Every leaf path of a generated event (and a few that do not exist yet). */
function pathsOf(value: Record<string, unknown>, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const [key, child] of Object.entries(value)) {
    paths.push([...prefix, key]);
    if (child !== null && typeof child === 'object' && !Array.isArray(child) && prefix.length < 1) paths.push(...pathsOf(child as Record<string, unknown>, [...prefix, key]));
  }
  return paths.concat([['job', 'maxRetries'], ['extra'], ['job', 'previousState']]);
}

/** A valid event, or one with up to two fields replaced by odd values or removed. */
export function nearValidEvent(connectionId: string, nowMs: number): fc.Arbitrary<unknown> {
  return validEvent(connectionId, nowMs).chain((event) => {
    const paths = pathsOf(event);
    const remove = fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
    const mutation = fc.tuple(fc.constantFrom(...paths), oddValue, remove);
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant(event as unknown) },
      {
        weight: 5,
        arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }).map((mutations) =>
          mutations.reduce((current, [path, value, remove]) => mutateAt(current, path, value, remove), event),
        ),
      },
      { weight: 1, arbitrary: oddValue },
    );
  });
}

/** A request body for /api/ingest: mostly a batch of near-valid events, sometimes a broken envelope. */
export function ingestBody(connectionId: string, nowMs: number): fc.Arbitrary<string> {
  const batch = fc.array(nearValidEvent(connectionId, nowMs), { minLength: 1, maxLength: 25 });
  return fc.oneof(
    { weight: 12, arbitrary: batch.map((events) => JSON.stringify({ events })) },
    { weight: 1, arbitrary: batch.map((events) => JSON.stringify({ events, extra: 1 }).slice(0, -3)) },
    { weight: 1, arbitrary: oddValue.map((value) => JSON.stringify({ events: value })) },
    { weight: 1, arbitrary: batch.map((events) => JSON.stringify(events)) },
  );
}

/** The query parameters of one list endpoint, valid by default, with odd values mixed in. */
const param = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: oddString }, { weight: 1, arbitrary: oddNumber.map(String) }, {
    weight: 1,
    arbitrary: fc.constantFrom('1e2', '0x10', '+5', ' 5', '5.0', '-1', '0', '101', '99999999999999999999', ''),
  });

const numberText = (min: number, max: number) => fc.integer({ min, max }).map(String);

export const LIST_ENDPOINTS = {
  '/api/jobs': {
    limit: param(numberText(1, 100)),
    sortBy: param(fc.constantFrom(...JOB_SORT_KEYS)),
    sortOrder: param(fc.constantFrom('asc', 'desc')),
    state: param(fc.constantFrom(...JOB_STATES)),
    queue: param(fc.constantFrom('default', 'emails')),
    worker: param(fc.constantFrom('w1', 'w2')),
    search: param(fc.constantFrom('add', 'EMAIL', 'job-1', '%', '.*')),
    framework: param(fc.constantFrom(...FRAMEWORKS)),
    cursor: param(fc.constantFrom('eyJ2IjoxfQ', 'AAAA', 'x')),
  },
  '/api/queues': {
    page: param(numberText(1, 5)),
    limit: param(numberText(1, 100)),
    sortBy: param(fc.constantFrom('name', 'depth', 'consumers', 'throughput', 'failureRate')),
    sortOrder: param(fc.constantFrom('asc', 'desc')),
    timeRange: param(fc.constantFrom(...TIME_RANGES)),
    framework: param(fc.constantFrom(...FRAMEWORKS)),
  },
  '/api/workers': {
    page: param(numberText(1, 5)),
    limit: param(numberText(1, 100)),
    sortBy: param(fc.constantFrom('hostname', 'state', 'activeJobs', 'lastHeartbeat', 'taskRate')),
    sortOrder: param(fc.constantFrom('asc', 'desc')),
    state: param(fc.constantFrom(...WORKER_STATES)),
  },
  '/api/agent/commands': { limit: param(numberText(1, 1000)) },
} as const;

/** `[path, query string]` for one of the list endpoints; a parameter may repeat. */
export const listRequest: fc.Arbitrary<[keyof typeof LIST_ENDPOINTS, string]> = fc
  .constantFrom(...(Object.keys(LIST_ENDPOINTS) as Array<keyof typeof LIST_ENDPOINTS>))
  .chain((path) => {
    const params = LIST_ENDPOINTS[path] as Record<string, fc.Arbitrary<string>>;
    const pairs = fc.array(fc.constantFrom(...Object.keys(params)).chain((name) => params[name]!.map((value) => [name, value] as const)), { maxLength: 5 });
    return pairs.map((list) => [path, new URLSearchParams(list.map(([name, value]): [string, string] => [name, value])).toString()] as [keyof typeof LIST_ENDPOINTS, string]);
  });
