import { beforeAll, describe, expect, test } from 'bun:test';
import { T0, testApp, type TestApp } from '../support/test-app.ts';
import { iso, jobEvent, queueEvent, workerEvent } from '../support/events.ts';

let t: TestApp;
let connection: { id: string; apiKey: string };
let sequence = 0;

beforeAll(async () => {
  t = await testApp({ limits: { dailyEventLimit: 0 } });
  connection = await t.createConnection(await t.login(), 'prod');
});

/** Sends one event and returns its verdict: 'accepted' or the per-event error. */
async function verdict(event: unknown): Promise<'accepted' | { code: string; message: string; details?: Record<string, string[]> }> {
  const response = await t.ingest(connection.apiKey, [event]);
  expect(response.status).toBe(200);
  if (response.json.accepted === 1) return 'accepted';
  expect(response.json.rejected).toBe(1);
  expect(response.json.errors[0].index).toBe(0);
  return response.json.errors[0];
}

const job = (fields: Record<string, unknown>) => jobEvent(connection.id, T0, { externalId: `job-${++sequence}`, ...fields });
const fieldsOf = (result: Awaited<ReturnType<typeof verdict>>) => (result === 'accepted' ? [] : Object.keys(result.details ?? {}));

describe('ingest: each job field at and past its limit', () => {
  const limits: Array<[string, number]> = [
    ['externalId', 512],
    ['name', 1024],
    ['queue', 255],
    ['workerId', 512],
    ['error', 10_000],
    ['stacktrace', 50_000],
  ];
  for (const [field, max] of limits) {
    test(`${field}: ${max} characters pass, ${max + 1} are rejected naming job.${field}`, async () => {
      expect(await verdict(job({ [field]: 'x'.repeat(max) }))).toBe('accepted');
      const rejected = await verdict(job({ [field]: 'x'.repeat(max + 1) }));
      expect(rejected).not.toBe('accepted');
      expect(fieldsOf(rejected)).toEqual([`job.${field}`]);
    });
  }

  test('progress accepts 0 and 1, rejects below 0 and above 1', async () => {
    expect(await verdict(job({ progress: 0 }))).toBe('accepted');
    expect(await verdict(job({ progress: 1 }))).toBe('accepted');
    expect(fieldsOf(await verdict(job({ progress: 1.0001 })))).toEqual(['job.progress']);
    expect(fieldsOf(await verdict(job({ progress: -0.1 })))).toEqual(['job.progress']);
  });

  test('attempt is a whole number from 1', async () => {
    expect(await verdict(job({ attempt: 1 }))).toBe('accepted');
    expect(fieldsOf(await verdict(job({ attempt: 0 })))).toEqual(['job.attempt']);
    expect(fieldsOf(await verdict(job({ attempt: 1.5 })))).toEqual(['job.attempt']);
  });

  test('required fields are named when missing', async () => {
    const event = job({});
    delete (event.job as Record<string, unknown>).name;
    expect(fieldsOf(await verdict(event))).toEqual(['job.name']);
  });

  test('state must be a unified state; native names are rejected with the allowed list', async () => {
    const rejected = await verdict(job({ state: 'SUCCESS' }));
    expect(rejected).not.toBe('accepted');
    expect((rejected as any).details['job.state'][0]).toContain('completed');
    expect(fieldsOf(await verdict(job({ previousState: 'bogus' })))).toEqual(['job.previousState']);
  });

  test('null optional fields are treated as absent', async () => {
    expect(await verdict(job({ queue: null, workerId: null, progress: null, extensions: null }))).toBe('accepted');
  });

  test('timestamps need a zone', async () => {
    expect(fieldsOf(await verdict({ ...job({}), timestamp: '2026-11-21T10:00:00' }))).toEqual(['timestamp']);
    expect(await verdict({ ...job({}), timestamp: '2026-11-21T10:00:00+02:00' })).toBe('accepted');
    expect(fieldsOf(await verdict(job({ startedAt: 'yesterday' })))).toEqual(['job.startedAt']);
    expect(fieldsOf(await verdict({ ...job({}), timestamp: '2026-13-45T10:00:00Z' }))).toEqual(['timestamp']);
  });

  test('framework must be celery, bullmq or sidekiq', async () => {
    expect(await verdict({ ...job({}), framework: 'sidekiq' })).toBe('accepted');
    expect(fieldsOf(await verdict({ ...job({}), framework: 'resque' }))).toEqual(['framework']);
  });
});

describe('ingest: event type, payload and connection', () => {
  test('an unknown type is UNSUPPORTED_EVENT_TYPE', async () => {
    const result = await verdict({ ...job({}), type: 'job_exploded' });
    expect(result).toMatchObject({ code: 'UNSUPPORTED_EVENT_TYPE' });
  });

  test('a connectionId that is not the key\'s connection is CONNECTION_MISMATCH', async () => {
    const result = await verdict({ ...job({}), connectionId: '00000000-0000-7000-8000-000000000000' });
    expect(result).toMatchObject({ code: 'CONNECTION_MISMATCH' });
  });

  test('the payload must be present and match the type; a second payload is refused', async () => {
    const noPayload = job({});
    delete (noPayload as Record<string, unknown>).job;
    expect(fieldsOf(await verdict(noPayload))).toEqual(['job']);
    const mismatched = { ...workerEvent(connection.id, T0), type: 'job_state_change' };
    expect(fieldsOf(await verdict(mismatched))).toEqual(['worker']);
    expect(fieldsOf(await verdict({ ...job({}), queue: { name: 'q', depth: 1 } }))).toEqual(['queue']);
  });

  test('an event that is not an object is rejected on its own', async () => {
    const response = await t.ingest(connection.apiKey, [42, job({})]);
    expect(response.json).toMatchObject({ accepted: 1, rejected: 1 });
    expect(response.json.errors).toEqual([{ index: 0, code: 'VALIDATION_ERROR', message: 'event failed validation', details: { '(event)': ['must be an object'] } }]);
  });

  test('worker and queue payloads follow their rules', async () => {
    expect(await verdict(workerEvent(connection.id, T0, { state: 'heartbeat', queues: ['a', 'b'], pid: 12 }))).toBe('accepted');
    expect(fieldsOf(await verdict(workerEvent(connection.id, T0, { state: 'sleeping' })))).toEqual(['worker.state']);
    expect(fieldsOf(await verdict(workerEvent(connection.id, T0, { hostname: undefined })))).toEqual(['worker.hostname']);
    expect(await verdict(queueEvent(connection.id, T0, { name: 'q'.repeat(255) }))).toBe('accepted');
    expect(fieldsOf(await verdict(queueEvent(connection.id, T0, { name: 'q'.repeat(256) })))).toEqual(['queue.name']);
    expect(fieldsOf(await verdict(queueEvent(connection.id, T0, { depth: -1 })))).toEqual(['queue.depth']);
  });
});

describe('ingest: extensions and metadata limits', () => {
  const nested = (levels: number): Record<string, unknown> => (levels === 1 ? { leaf: 1 } : { next: nested(levels - 1) });

  test('8 levels deep pass, 9 are rejected', async () => {
    expect(await verdict(job({ extensions: nested(8) }))).toBe('accepted');
    expect(fieldsOf(await verdict(job({ extensions: nested(9) })))).toEqual(['job.extensions']);
  });

  test('64 KB serialized pass, one byte more is rejected', async () => {
    const overhead = JSON.stringify({ blob: '' }).length;
    expect(await verdict(job({ extensions: { blob: 'x'.repeat(64 * 1024 - overhead) } }))).toBe('accepted');
    expect(fieldsOf(await verdict(job({ extensions: { blob: 'x'.repeat(64 * 1024 - overhead + 1) } })))).toEqual(['job.extensions']);
  });

  test('prototype keys are rejected, also nested and in worker metadata', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const raw = JSON.parse(`{"outer": {"${key}": {"polluted": true}}}`);
      expect(fieldsOf(await verdict(job({ extensions: raw })))).toEqual(['job.extensions']);
      expect(fieldsOf(await verdict(workerEvent(connection.id, T0, { metadata: raw })))).toEqual(['worker.metadata']);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('extensions must be an object', async () => {
    expect(fieldsOf(await verdict(job({ extensions: [1, 2] })))).toEqual(['job.extensions']);
  });
});

describe('ingest: rejected events do not stop the batch', () => {
  test('errors list the index of each rejected event, at most 100', async () => {
    const events = Array.from({ length: 150 }, (_, i) => (i % 3 === 0 ? job({}) : job({ progress: 2 })));
    const response = await t.ingest(connection.apiKey, events);
    expect(response.json).toMatchObject({ accepted: 50, rejected: 100 });
    expect(response.json.errors).toHaveLength(100);
    expect(response.json.errors[0].index).toBe(1);
    const many = Array.from({ length: 150 }, () => job({ progress: 2 }));
    expect((await t.ingest(connection.apiKey, many)).json.errors).toHaveLength(100);
  });
});

describe('ingest: strings must be well-formed Unicode', () => {
  // A lone surrogate survives JSON.parse but not UTF-8/msgpack: it would change on reload.
  const lone = 'a\ud800b';
  const reason = ['must be well-formed Unicode (no lone UTF-16 surrogates)'];

  test('each job string field, nested extension values and keys are refused, naming the field', async () => {
    for (const field of ['externalId', 'name', 'queue', 'workerId', 'error', 'stacktrace']) {
      const result = await verdict(job({ [field]: lone }));
      expect(result).toMatchObject({ code: 'VALIDATION_ERROR', details: { [`job.${field}`]: reason } });
    }
    expect(await verdict(job({ extensions: { outer: { list: ['ok', lone] } } }))).toMatchObject({ details: { 'job.extensions.outer.list.1': reason } });
    expect(await verdict(job({ extensions: { outer: { [lone]: 1 } } }))).toMatchObject({ details: { 'job.extensions.outer': reason } });
  });

  test('worker strings, queue lists, metadata and queue names are refused', async () => {
    const worker = (fields: Record<string, unknown>) => workerEvent(connection.id, T0, { externalId: `w-${++sequence}`, ...fields });
    expect(await verdict(worker({ externalId: lone }))).toMatchObject({ details: { 'worker.externalId': reason } });
    expect(await verdict(worker({ hostname: lone }))).toMatchObject({ details: { 'worker.hostname': reason } });
    expect(await verdict(worker({ queues: ['a', lone] }))).toMatchObject({ details: { 'worker.queues.1': reason } });
    expect(await verdict(worker({ metadata: { deep: { value: lone } } }))).toMatchObject({ details: { 'worker.metadata.deep.value': reason } });
    expect(await verdict(queueEvent(connection.id, T0, { name: lone }))).toMatchObject({ details: { 'queue.name': reason } });
  });

  test('paired surrogates (emoji) are well-formed and accepted', async () => {
    expect(await verdict(job({ name: 'tasks.send_\ud83d\udce7', extensions: { note: '\ud83d\ude00' } }))).toBe('accepted');
  });
});

describe('ingest: timestamps are real calendar instants, not far ahead of the server clock', () => {
  const at = (timestamp: string) => ({ ...job({}), timestamp });

  test('impossible dates and times are refused instead of rolling over', async () => {
    for (const timestamp of ['2026-02-31T10:00:00Z', '2026-02-29T10:00:00Z', '2026-04-31T10:00:00Z', '2026-11-00T10:00:00Z', '2026-11-21T24:00:00Z', '2026-11-21T10:60:00Z', '2026-11-21T10:00:60Z', '2026-11-21T10:00:00+24:00']) {
      expect({ timestamp, fields: fieldsOf(await verdict(at(timestamp))) }).toEqual({ timestamp, fields: ['timestamp'] });
    }
    expect(fieldsOf(await verdict(job({ startedAt: '2026-02-30T10:00:00Z' })))).toEqual(['job.startedAt']);
    expect(await verdict(at('2024-02-29T10:00:00Z'))).toBe('accepted');
  });

  test('year 2000 is the earliest accepted time; year 0000 and a clock reset to 1970 are refused', async () => {
    expect(await verdict(at('2000-01-01T00:00:00Z'))).toBe('accepted');
    expect(fieldsOf(await verdict(at('1999-12-31T23:59:59.999Z')))).toEqual(['timestamp']);
    expect(fieldsOf(await verdict(at('1970-01-01T00:00:00Z')))).toEqual(['timestamp']);
    expect(fieldsOf(await verdict(at('0000-01-01T00:00:00Z')))).toEqual(['timestamp']);
    expect(fieldsOf(await verdict(job({ createdAt: '0000-01-01T00:00:00Z' })))).toEqual(['job.createdAt']);
  });

  test('up to 5 minutes ahead of the server clock pass; further ahead is refused, in every time field', async () => {
    // The app's clock stands at T0.
    expect(await verdict(at(iso(T0 + 300_000)))).toBe('accepted');
    const ahead = await verdict(at(iso(T0 + 300_001)));
    expect(ahead).toMatchObject({ code: 'VALIDATION_ERROR', details: { timestamp: [expect.stringContaining('ahead of the server clock')] } });
    expect(fieldsOf(await verdict(at('9999-12-31T23:59:59Z')))).toEqual(['timestamp']);
    for (const field of ['createdAt', 'startedAt', 'completedAt']) {
      expect(fieldsOf(await verdict(job({ [field]: iso(T0 + 3_600_000) })))).toEqual([`job.${field}`]);
    }
    expect(fieldsOf(await verdict({ ...workerEvent(connection.id, T0), timestamp: '9999-01-01T00:00:00Z' }))).toEqual(['timestamp']);
    expect(fieldsOf(await verdict({ ...queueEvent(connection.id, T0), timestamp: '9999-01-01T00:00:00Z' }))).toEqual(['timestamp']);
  });

  test('the tolerance is configurable and judged against the injected clock', async () => {
    const strict = await testApp({ limits: { dailyEventLimit: 0, clockSkewToleranceMs: 0 } });
    const c = await strict.createConnection(await strict.login(), 'strict');
    const event = jobEvent(c.id, T0 + 1000, { externalId: 'early' });
    expect((await strict.ingest(c.apiKey, [event])).json).toMatchObject({ accepted: 0, rejected: 1 });
    strict.clock.advance(1000);
    expect((await strict.ingest(c.apiKey, [event])).json).toMatchObject({ accepted: 1, rejected: 0 });
  });
});
