/**
 * Event validation called directly: the exact verdict for each rule, since clients read the
 * error codes, field paths and messages; and the exact normalized event for valid input.
 * (ingest-event-rules.test.ts checks the same rules through POST /api/ingest.)
 */
import { describe, expect, test } from 'bun:test';
import { FIELD_LIMITS } from '../../actors/ingest/event-schema.ts';
import { JSON_OBJECT_BYTES_MAX, JSON_OBJECT_DEPTH_MAX, jsonObjectProblem } from '../../actors/ingest/json-object-limits.ts';
import { EVENT_TYPES, FINISHED_STATES, FRAMEWORKS, JOB_STATES, WORKER_EVENT_STATES } from '../../actors/ingest/states.ts';
import { EARLIEST_TIMESTAMP, futureTimestampMessage, isValidTimestamp, TIMESTAMP_MESSAGE } from '../../actors/ingest/timestamp-rules.ts';
import { validateEvent, type EventVerdict } from '../../actors/ingest/validate-event.ts';
import { ILL_FORMED_MESSAGE, illFormedFieldPath, illFormedStringPath } from '../../actors/ingest/well-formed-strings.ts';

const NOW = Date.parse('2026-11-21T10:00:00.000Z');
const AT = '2026-11-21T09:00:00.000Z';
const ENVELOPE = { type: 'job_state_change', timestamp: AT, framework: 'celery', connectionId: 'c1' };
const JOB = { externalId: 'j1', name: 'tasks.add', state: 'queued' };
const WORKER_ENVELOPE = { ...ENVELOPE, type: 'worker_state_change' };
const WORKER = { externalId: 'w1', hostname: 'host-a', state: 'online' };
const QUEUE_ENVELOPE = { ...ENVELOPE, type: 'queue_snapshot' };
const STATES_MESSAGE = `must be one of: ${JOB_STATES.join(', ')}`;

function validate(raw: unknown, notAfterMs = NOW): EventVerdict {
  return validateEvent(raw, 'c1', notAfterMs);
}

function job(fields: Record<string, unknown>) {
  return { ...ENVELOPE, job: { ...JOB, ...fields } };
}

/** The details of a VALIDATION_ERROR verdict (fails the test for any other verdict). */
function detailsOf(raw: unknown, notAfterMs = NOW): Record<string, string[]> {
  const verdict = validate(raw, notAfterMs);
  if (verdict.ok) throw new Error(`expected a refusal of ${JSON.stringify(raw)}`);
  expect(verdict.error.code).toBe('VALIDATION_ERROR');
  expect(verdict.error.message).toBe('event failed validation');
  return verdict.error.details!;
}

function eventOf(raw: unknown, notAfterMs = NOW) {
  const verdict = validate(raw, notAfterMs);
  if (!verdict.ok) throw new Error(`expected acceptance, got ${JSON.stringify(verdict.error)}`);
  return verdict.event;
}

describe('the envelope', () => {
  test('an event that is not an object', () => {
    for (const raw of [null, undefined, 'job', 42, true, [ENVELOPE]]) expect(detailsOf(raw)).toEqual({ '(event)': ['must be an object'] });
  });

  test('missing envelope fields are each named, with the rule', () => {
    expect(detailsOf({})).toEqual({
      type: ['expected required property', 'expected string'],
      timestamp: [TIMESTAMP_MESSAGE],
      framework: [`must be one of: ${FRAMEWORKS.join(', ')}`],
      connectionId: ['expected required property', 'expected string'],
    });
  });

  test('type and connectionId are at most 64 characters', () => {
    expect(detailsOf({ ...job({}), type: 'x'.repeat(65) })).toEqual({ type: ['expected string length less or equal to 64'] });
    expect(detailsOf({ ...job({}), connectionId: 'x'.repeat(65) })).toEqual({ connectionId: ['expected string length less or equal to 64'] });
  });

  test('an unknown type is UNSUPPORTED_EVENT_TYPE naming the supported ones', () => {
    expect(validate({ ...job({}), type: 'job_created' })).toEqual({
      ok: false,
      error: { code: 'UNSUPPORTED_EVENT_TYPE', message: "event type 'job_created' is not supported; use one of job_state_change, worker_state_change, queue_snapshot" },
    });
    expect(EVENT_TYPES).toEqual(['job_state_change', 'worker_state_change', 'queue_snapshot']);
  });

  test("another connection's id is CONNECTION_MISMATCH", () => {
    expect(validate({ ...job({}), connectionId: 'c2' })).toEqual({
      ok: false,
      error: { code: 'CONNECTION_MISMATCH', message: "connectionId does not match the API key's connection" },
    });
  });

  test("the type's payload is required; another type's payload must be absent or null", () => {
    expect(detailsOf(ENVELOPE)).toEqual({ job: ['is required for a job_state_change event'] });
    expect(detailsOf({ ...ENVELOPE, job: null })).toEqual({ job: ['is required for a job_state_change event'] });
    expect(detailsOf({ ...QUEUE_ENVELOPE })).toEqual({ queue: ['is required for a queue_snapshot event'] });
    expect(detailsOf({ ...job({}), worker: {}, queue: { name: 'q', depth: 1 } })).toEqual({
      worker: ['must not be present on a job_state_change event'],
      queue: ['must not be present on a job_state_change event'],
    });
    expect(detailsOf({ ...WORKER_ENVELOPE, worker: WORKER, job: JOB })).toEqual({ job: ['must not be present on a worker_state_change event'] });
    expect(eventOf({ ...job({}), worker: null, queue: undefined }).kind).toBe('job');
  });

  test('framework is one of celery, bullmq, sidekiq', () => {
    expect(FRAMEWORKS).toEqual(['celery', 'bullmq', 'sidekiq']);
    for (const framework of FRAMEWORKS) expect(eventOf({ ...job({}), framework }).framework).toBe(framework);
    expect(detailsOf({ ...job({}), framework: 'rq' })).toEqual({ framework: ['must be one of: celery, bullmq, sidekiq'] });
  });
});

describe('job payloads', () => {
  test('a full job is normalized field by field; times become milliseconds', () => {
    const event = eventOf(
      job({
        queue: 'default',
        previousState: 'scheduled',
        workerId: 'w1',
        attempt: 2,
        maxRetries: 3,
        progress: 0.5,
        error: 'boom',
        stacktrace: 'at x',
        createdAt: '2026-11-21T08:00:00Z',
        startedAt: '2026-11-21T08:30:00+01:00',
        completedAt: '2026-11-21T08:59:59.5Z',
        extensions: { eta: 'soon' },
        unknownField: 'dropped',
      }),
    );
    expect(event).toEqual({
      kind: 'job',
      atMs: Date.parse(AT),
      framework: 'celery',
      externalId: 'j1',
      name: 'tasks.add',
      state: 'queued',
      queue: 'default',
      workerId: 'w1',
      attempt: 2,
      maxRetries: 3,
      progress: 0.5,
      error: 'boom',
      stacktrace: 'at x',
      createdAtMs: Date.parse('2026-11-21T08:00:00Z'),
      startedAtMs: Date.parse('2026-11-21T07:30:00Z'),
      completedAtMs: Date.parse('2026-11-21T08:59:59.500Z'),
      extensions: { eta: 'soon' },
    });
  });

  test('optional fields that are null or absent are left out; zero and empty values are kept', () => {
    const nulls = Object.fromEntries(
      ['queue', 'previousState', 'workerId', 'attempt', 'maxRetries', 'progress', 'error', 'stacktrace', 'createdAt', 'startedAt', 'completedAt', 'extensions'].map((field) => [field, null]),
    );
    // toStrictEqual: a field set to undefined is not the same as no field (msgpack keeps the key)
    expect(eventOf(job(nulls))).toStrictEqual({ kind: 'job', atMs: Date.parse(AT), framework: 'celery', externalId: 'j1', name: 'tasks.add', state: 'queued' });
    expect(eventOf(job({ maxRetries: 0, progress: 0, error: '', stacktrace: '', extensions: {} }))).toEqual({
      kind: 'job',
      atMs: Date.parse(AT),
      framework: 'celery',
      externalId: 'j1',
      name: 'tasks.add',
      state: 'queued',
      maxRetries: 0,
      progress: 0,
      error: '',
      stacktrace: '',
      extensions: {},
    });
  });

  test('every unified state is accepted; others are refused with the list', () => {
    for (const state of JOB_STATES) expect((eventOf(job({ state })) as { state: string }).state).toBe(state);
    expect(JOB_STATES).toEqual(['unknown', 'queued', 'scheduled', 'active', 'completed', 'failed', 'retrying', 'cancelled']);
    expect(detailsOf(job({ state: 'SUCCESS' }))).toEqual({ 'job.state': [STATES_MESSAGE] });
    expect(detailsOf(job({ previousState: 'SUCCESS' }))).toEqual({ 'job.previousState': [STATES_MESSAGE] });
  });

  test('required fields missing, and every field of the wrong type, are each named', () => {
    expect(detailsOf({ ...ENVELOPE, job: {} })).toEqual({
      'job.externalId': ['expected required property', 'expected string'],
      'job.name': ['expected required property', 'expected string'],
      'job.state': [STATES_MESSAGE], // the missing-property error is worded by the schema too, and equal messages are listed once
    });
    expect(detailsOf({ ...ENVELOPE, job: 'j1' })).toEqual({ job: ['expected object'] });
    const wrong = { externalId: 1, name: 2, queue: 3, state: 4, previousState: 5, workerId: 6, attempt: 'a', maxRetries: 'b', progress: 'c', error: 7, stacktrace: 8, createdAt: 9, startedAt: 10, completedAt: 11, extensions: 12 };
    expect(detailsOf({ ...ENVELOPE, job: wrong })).toEqual({
      'job.externalId': ['expected string'],
      'job.name': ['expected string'],
      'job.queue': ['expected string'],
      'job.state': [STATES_MESSAGE],
      'job.previousState': [STATES_MESSAGE],
      'job.workerId': ['expected string'],
      'job.attempt': ['expected integer'],
      'job.maxRetries': ['expected integer'],
      'job.progress': ['expected number'],
      'job.error': ['expected string'],
      'job.stacktrace': ['expected string'],
      'job.createdAt': [TIMESTAMP_MESSAGE],
      'job.startedAt': [TIMESTAMP_MESSAGE],
      'job.completedAt': [TIMESTAMP_MESSAGE],
      'job.extensions': ['expected object'],
    });
  });

  const lengthLimits: Array<[string, number, number]> = [
    ['externalId', FIELD_LIMITS.externalIdChars, 512],
    ['name', FIELD_LIMITS.nameChars, 1024],
    ['queue', FIELD_LIMITS.queueChars, 255],
    ['workerId', FIELD_LIMITS.workerIdChars, 512],
    ['error', FIELD_LIMITS.errorChars, 10_000],
    ['stacktrace', FIELD_LIMITS.stacktraceChars, 50_000],
  ];
  for (const [field, limit, documented] of lengthLimits) {
    test(`${field}: ${documented} characters pass, one more is refused`, () => {
      expect(limit).toBe(documented);
      expect(validate(job({ [field]: 'x'.repeat(limit) })).ok).toBe(true);
      expect(detailsOf(job({ [field]: 'x'.repeat(limit + 1) }))).toEqual({ [`job.${field}`]: [`expected string length less or equal to ${limit}`] });
    });
  }

  test('externalId, name and queue may not be empty', () => {
    for (const field of ['externalId', 'name', 'queue']) {
      expect(detailsOf(job({ [field]: '' }))).toEqual({ [`job.${field}`]: ['expected string length greater or equal to 1'] });
    }
  });

  test('attempt from 1, counts from 0, both up to 1,000,000,000; progress from 0 to 1', () => {
    expect(FIELD_LIMITS.countMax).toBe(1_000_000_000);
    expect(validate(job({ attempt: 1, maxRetries: 0, progress: 1 })).ok).toBe(true);
    expect(validate(job({ attempt: 1_000_000_000, maxRetries: 1_000_000_000 })).ok).toBe(true);
    expect(detailsOf(job({ attempt: 0 }))).toEqual({ 'job.attempt': ['expected integer to be greater or equal to 1'] });
    expect(detailsOf(job({ attempt: 1_000_000_001 }))).toEqual({ 'job.attempt': ['expected integer to be less or equal to 1000000000'] });
    expect(detailsOf(job({ attempt: 1.5 }))).toEqual({ 'job.attempt': ['expected integer'] });
    expect(detailsOf(job({ maxRetries: -1 }))).toEqual({ 'job.maxRetries': ['expected integer to be greater or equal to 0'] });
    expect(detailsOf(job({ maxRetries: 1_000_000_001 }))).toEqual({ 'job.maxRetries': ['expected integer to be less or equal to 1000000000'] });
    expect(detailsOf(job({ progress: -0.1 }))).toEqual({ 'job.progress': ['expected number to be greater or equal to 0'] });
    expect(detailsOf(job({ progress: 1.01 }))).toEqual({ 'job.progress': ['expected number to be less or equal to 1'] });
  });
});

test('completed and failed are the finished states', () => {
  expect([...FINISHED_STATES]).toEqual(['completed', 'failed']);
});

describe('worker and queue payloads', () => {
  test('a full worker is normalized; null optional fields are left out', () => {
    const full = { ...WORKER, pid: 4242, concurrency: 8, activeJobs: 0, queues: ['a', 'b'], metadata: { version: '5.3' }, extra: 'dropped' };
    expect(eventOf({ ...WORKER_ENVELOPE, framework: 'sidekiq', worker: full })).toEqual({
      kind: 'worker',
      atMs: Date.parse(AT),
      framework: 'sidekiq',
      externalId: 'w1',
      hostname: 'host-a',
      state: 'online',
      pid: 4242,
      concurrency: 8,
      activeJobs: 0,
      queues: ['a', 'b'],
      metadata: { version: '5.3' },
    });
    const nulls = { ...WORKER, pid: null, concurrency: null, activeJobs: null, queues: null, metadata: null };
    expect(eventOf({ ...WORKER_ENVELOPE, worker: nulls })).toStrictEqual({ kind: 'worker', atMs: Date.parse(AT), framework: 'celery', externalId: 'w1', hostname: 'host-a', state: 'online' });
    expect(eventOf({ ...WORKER_ENVELOPE, worker: { ...WORKER, pid: 0, queues: [] } })).toMatchObject({ pid: 0, queues: [] });
  });

  test('worker rules: states, hostname length, pid range, at most 256 queues of at most 255 characters', () => {
    expect(WORKER_EVENT_STATES).toEqual(['online', 'busy', 'idle', 'offline', 'heartbeat']);
    for (const state of WORKER_EVENT_STATES) expect(validate({ ...WORKER_ENVELOPE, worker: { ...WORKER, state } }).ok).toBe(true);
    const refused = (fields: Record<string, unknown>) => detailsOf({ ...WORKER_ENVELOPE, worker: { ...WORKER, ...fields } });
    expect(refused({ state: 'running' })).toEqual({ 'worker.state': ['must be one of: online, busy, idle, offline, heartbeat'] });
    expect(FIELD_LIMITS.hostnameChars).toBe(255);
    expect(validate({ ...WORKER_ENVELOPE, worker: { ...WORKER, hostname: 'h'.repeat(255) } }).ok).toBe(true);
    expect(refused({ hostname: 'h'.repeat(256) })).toEqual({ 'worker.hostname': ['expected string length less or equal to 255'] });
    expect(validate({ ...WORKER_ENVELOPE, worker: { ...WORKER, pid: 2 ** 32 } }).ok).toBe(true);
    expect(refused({ pid: 2 ** 32 + 1 })).toEqual({ 'worker.pid': [`expected integer to be less or equal to ${2 ** 32}`] });
    expect(refused({ pid: -1 })).toEqual({ 'worker.pid': ['expected integer to be greater or equal to 0'] });
    expect(FIELD_LIMITS.queuesPerWorkerMax).toBe(256);
    const queues = (count: number) => Array.from({ length: count }, (_, index) => `q${index}`);
    expect(validate({ ...WORKER_ENVELOPE, worker: { ...WORKER, queues: queues(256) } }).ok).toBe(true);
    expect(refused({ queues: queues(257) })).toEqual({ 'worker.queues': ['expected array length to be less or equal to 256'] });
    expect(refused({ queues: ['a', 5] })).toEqual({ 'worker.queues': ['expected string'] });
    expect(refused({ queues: ['q'.repeat(256)] })).toEqual({ 'worker.queues': ['expected string length less or equal to 255'] });
    expect(refused({ concurrency: -1 })).toEqual({ 'worker.concurrency': ['expected integer to be greater or equal to 0'] });
    expect(refused({ activeJobs: 1.5 })).toEqual({ 'worker.activeJobs': ['expected integer'] });
  });

  test('a queue snapshot is normalized; name, depth and consumers follow their rules', () => {
    expect(eventOf({ ...QUEUE_ENVELOPE, framework: 'bullmq', queue: { name: 'default', depth: 0, consumers: 2 } })).toEqual({
      kind: 'queue',
      atMs: Date.parse(AT),
      framework: 'bullmq',
      name: 'default',
      depth: 0,
      consumers: 2,
    });
    expect(eventOf({ ...QUEUE_ENVELOPE, queue: { name: 'default', depth: 3, consumers: null } })).toStrictEqual({
      kind: 'queue',
      atMs: Date.parse(AT),
      framework: 'celery',
      name: 'default',
      depth: 3,
    });
    const refused = (queue: Record<string, unknown>) => detailsOf({ ...QUEUE_ENVELOPE, queue });
    expect(refused({ name: 'q' })).toEqual({ 'queue.depth': ['expected required property', 'expected integer'] });
    expect(refused({ name: '', depth: 1 })).toEqual({ 'queue.name': ['expected string length greater or equal to 1'] });
    expect(refused({ name: 'q', depth: -1 })).toEqual({ 'queue.depth': ['expected integer to be greater or equal to 0'] });
    expect(refused({ name: 'q', depth: 1, consumers: 'two' })).toEqual({ 'queue.consumers': ['expected integer'] });
    expect(refused({ name: 'q\ud800', depth: 1 })).toEqual({ 'queue.name': [ILL_FORMED_MESSAGE] });
  });
});

describe('timestamps', () => {
  test('the message says what a timestamp must be', () => {
    expect(TIMESTAMP_MESSAGE).toBe('must be an ISO 8601 date-time with a zone (Z or an offset), a real calendar date, from 2000-01-01 on');
    expect(EARLIEST_TIMESTAMP).toBe('2000-01-01T00:00:00Z');
  });

  test('RFC 3339 with a zone, in its allowed spellings', () => {
    for (const value of [
      '2026-11-21T09:00:00Z',
      '2026-11-21t09:00:00z',
      '2026-11-21 09:00:00Z',
      '2026-11-21T09:00:00.1Z',
      '2026-11-21T09:00:00.123456789Z',
      '2026-11-21T09:00:00+23:59',
      '2026-11-21T09:00:00-05:30',
      '2028-02-29T00:00:00Z',
      '2026-12-31T23:59:59Z',
      '2000-01-01T00:00:00Z',
    ]) {
      expect([value, isValidTimestamp(value)]).toEqual([value, true]);
    }
  });

  test('no zone, bad shapes, impossible fields and times before 2000 are refused', () => {
    for (const value of [
      '2026-11-21T09:00:00',
      '2026-11-21',
      '2026-11-21T09:00Z',
      '2026-11-21T09:00:00.1234567890Z',
      '2026-11-21T09:00:00+2400',
      ' 2026-11-21T09:00:00Z',
      '2026-11-21T09:00:00Z ',
      '2026-11-21T24:00:00Z',
      '2026-11-21T23:60:00Z',
      '2026-11-21T23:59:60Z',
      '2026-11-21T09:00:00+24:00',
      '2026-11-21T09:00:00+23:60',
      '2027-02-29T00:00:00Z',
      '2026-02-31T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-11-00T00:00:00Z',
      '1999-12-31T23:59:59Z',
      '2000-01-01T00:30:00+01:00',
      '0000-01-01T00:00:00Z',
      '1970-01-01T00:00:00Z',
      // Date.parse accepts these two; the anchored shape does not
      '+002026-11-21T09:00:00Z',
      '2026-11-21 09:00:00Z UTC',
    ]) {
      expect([value, isValidTimestamp(value)]).toEqual([value, false]);
    }
  });

  test('a time ahead of notAfter is refused in every time field, naming the latest accepted time; notAfter itself passes', () => {
    const notAfterMs = Date.parse('2026-11-21T10:05:00.000Z');
    const at = (iso: string) => ({ timestamp: iso });
    const message = 'must not be ahead of the server clock by more than the configured tolerance (latest accepted now: 2026-11-21T10:05:00.000Z)';
    expect(futureTimestampMessage(notAfterMs)).toBe(message);
    const edge = '2026-11-21T10:05:00.000Z';
    const ahead = '2026-11-21T10:05:00.001Z';
    expect(validate({ ...job({ createdAt: edge, startedAt: edge, completedAt: edge }), ...at(edge) }, notAfterMs).ok).toBe(true);
    expect(detailsOf({ ...job({ createdAt: ahead, startedAt: ahead, completedAt: ahead }), ...at(ahead) }, notAfterMs)).toEqual({
      timestamp: [message],
      'job.createdAt': [message],
      'job.startedAt': [message],
      'job.completedAt': [message],
    });
    expect(detailsOf(job({ startedAt: ahead }), notAfterMs)).toEqual({ 'job.startedAt': [message] });
    expect(detailsOf({ ...WORKER_ENVELOPE, timestamp: ahead, worker: WORKER }, notAfterMs)).toEqual({ timestamp: [message] });
  });
});

describe('free-form objects (extensions, metadata)', () => {
  function nested(levels: number): Record<string, unknown> {
    let value: Record<string, unknown> = { leaf: 1 };
    for (let level = 1; level < levels; level++) value = { inner: value };
    return value;
  }

  test(`${JSON_OBJECT_DEPTH_MAX} levels pass, ${JSON_OBJECT_DEPTH_MAX + 1} are refused; arrays count as levels`, () => {
    expect(JSON_OBJECT_DEPTH_MAX).toBe(8);
    expect(jsonObjectProblem(nested(8))).toBeNull();
    expect(jsonObjectProblem({ a: null, b: [null, 'text', 1, true], c: { d: null } })).toBeNull();
    expect(jsonObjectProblem(nested(9))).toBe('must be at most 8 levels deep');
    expect(jsonObjectProblem({ a: [[[[[[[1]]]]]]] })).toBeNull();
    expect(jsonObjectProblem({ a: [[[[[[[{}]]]]]]] })).toBe('must be at most 8 levels deep');
    expect(jsonObjectProblem({ a: [1, [[[[[[{ b: 1 }]]]]]]] })).toBe('must be at most 8 levels deep');
    expect(detailsOf(job({ extensions: nested(9) }))).toEqual({ 'job.extensions': ['must be at most 8 levels deep'] });
    expect(detailsOf({ ...WORKER_ENVELOPE, worker: { ...WORKER, metadata: nested(9) } })).toEqual({ 'worker.metadata': ['must be at most 8 levels deep'] });
  });

  test(`${JSON_OBJECT_BYTES_MAX} bytes serialized pass, one more is refused; bytes are UTF-8 bytes`, () => {
    expect(JSON_OBJECT_BYTES_MAX).toBe(65_536);
    const padding = JSON_OBJECT_BYTES_MAX - JSON.stringify({ a: '' }).length;
    expect(jsonObjectProblem({ a: 'x'.repeat(padding) })).toBeNull();
    expect(jsonObjectProblem({ a: 'x'.repeat(padding + 1) })).toBe(`must be at most 65536 bytes serialized, got 65537`);
    expect(jsonObjectProblem({ a: 'é'.repeat(padding / 2 + 1) })).toBe(`must be at most 65536 bytes serialized, got 65538`);
  });

  test('prototype-polluting keys are refused at any depth, also inside arrays', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      expect(jsonObjectProblem(JSON.parse(`{"${key}": 1}`))).toBe(`must not contain the key '${key}'`);
      expect(jsonObjectProblem(JSON.parse(`{"a": [{"b": {"${key}": {}}}]}`))).toBe(`must not contain the key '${key}'`);
    }
    expect(jsonObjectProblem({ proto: 1, constructors: 2 })).toBeNull();
    expect(jsonObjectProblem({ fine: { a: 1 }, later: { constructor: 1 } })).toBe("must not contain the key 'constructor'");
    expect(detailsOf(job({ extensions: JSON.parse('{"__proto__": {"admin": true}}') }))).toEqual({ 'job.extensions': ["must not contain the key '__proto__'"] });
  });
});

describe('well-formed strings', () => {
  const LONE = '\ud800';

  test('a lone surrogate in any stored job field is refused, naming the first one', () => {
    for (const field of ['externalId', 'name', 'queue', 'workerId', 'error', 'stacktrace']) {
      expect(detailsOf(job({ [field]: `a${LONE}` }))).toEqual({ [`job.${field}`]: [ILL_FORMED_MESSAGE] });
    }
    expect(detailsOf(job({ extensions: { list: ['ok', `b${LONE}`] } }))).toEqual({ 'job.extensions.list.1': [ILL_FORMED_MESSAGE] });
    expect(detailsOf(job({ extensions: { [`k${LONE}`]: 1 } }))).toEqual({ 'job.extensions': [ILL_FORMED_MESSAGE] });
    expect(detailsOf(job({ name: LONE, error: LONE }))).toEqual({ 'job.name': [ILL_FORMED_MESSAGE] });
    expect(ILL_FORMED_MESSAGE).toBe('must be well-formed Unicode (no lone UTF-16 surrogates)');
  });

  test('worker strings, queue lists and metadata are checked too', () => {
    const refused = (fields: Record<string, unknown>) => detailsOf({ ...WORKER_ENVELOPE, worker: { ...WORKER, ...fields } });
    expect(refused({ externalId: LONE })).toEqual({ 'worker.externalId': [ILL_FORMED_MESSAGE] });
    expect(refused({ hostname: LONE })).toEqual({ 'worker.hostname': [ILL_FORMED_MESSAGE] });
    expect(refused({ queues: ['a', LONE] })).toEqual({ 'worker.queues.1': [ILL_FORMED_MESSAGE] });
    expect(refused({ metadata: { deep: { value: LONE } } })).toEqual({ 'worker.metadata.deep.value': [ILL_FORMED_MESSAGE] });
    expect(refused({ metadata: { first: 'fine', second: LONE } })).toEqual({ 'worker.metadata.second': [ILL_FORMED_MESSAGE] });
  });

  test('paired surrogates are well-formed; fields that are not stored are not checked', () => {
    expect(validate(job({ name: 'emoji \ud83d\ude00', error: 'é' })).ok).toBe(true);
    expect(validate(job({ notStored: LONE })).ok).toBe(true);
    expect(illFormedStringPath({ a: [1, null, { b: true }] }, 'x')).toBeNull();
    expect(illFormedStringPath(LONE, 'x')).toBe('x');
  });

  test('a field walked without finding anything does not end the search: a later field is still checked', () => {
    expect(illFormedFieldPath({ a: { fine: 'yes' }, b: 7, c: LONE }, ['a', 'b', 'c'], 'job')).toBe('job.c');
    expect(illFormedFieldPath({ a: { fine: 'yes' }, c: 'fine' }, ['a', 'c'], 'job')).toBeNull();
  });
});
