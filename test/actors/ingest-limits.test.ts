/**
 * The limits of one ingest decision, without HTTP: the per-connection bounds on queues and
 * workers (exact codes and messages), the daily quota that refuses a batch or truncates
 * it, and the usage a reply reports. (ingest-dedup-quota.test.ts and
 * tenant-queue-worker-bounds.test.ts check the same through POST /api/ingest.)
 */
import { describe, expect, test } from 'bun:test';
import { ConnectionActor, EVENT_ERRORS_REPORTED_MAX } from '../../actors/connection/connection-actor.ts';
import { DailyQuota } from '../../actors/connection/daily-quota.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { dedupKeyOf } from '../../actors/ingest/dedup-key.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';

const C = 'conn-1';
const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const limits = { dailyEventLimit: 0, dedupKeysMax: 1_000, maxJobsPerConnection: 1_000, retentionMs: 86_400_000 };

function ingest(actor: ConnectionActor, events: unknown[], nowMs = T0) {
  const decision = actor.decideIngest(events, nowMs);
  if (decision.record !== null) actor.evolve(decision.record);
  return decision;
}

describe('queue and worker bounds', () => {
  test('a job or queue snapshot that would create a queue past the bound is refused on its own, naming it', () => {
    const actor = new ConnectionActor(C, { ...limits, queuesPerConnectionMax: 2 });
    ingest(actor, [queueEvent(C, T0, { name: 'q1' })]);
    const { reply, record } = ingest(actor, [
      jobEvent(C, T0, { externalId: 'a', queue: 'q1' }),
      jobEvent(C, T0, { externalId: 'b', queue: 'q2' }),
      jobEvent(C, T0, { externalId: 'c', queue: 'q3' }),
      queueEvent(C, T0, { name: 'q4' }),
      jobEvent(C, T0, { externalId: 'd', queue: null }),
      workerEvent(C, T0, { externalId: 'w1' }),
    ]);
    expect(reply).toMatchObject({ accepted: 4, rejected: 2 });
    expect(reply.errors).toEqual([
      { index: 2, code: 'QUEUE_LIMIT_EXCEEDED', message: "the connection already has 2 queues (QUEUES_PER_CONNECTION_MAX); queue 'q3' was not created" },
      { index: 3, code: 'QUEUE_LIMIT_EXCEEDED', message: "the connection already has 2 queues (QUEUES_PER_CONNECTION_MAX); queue 'q4' was not created" },
    ]);
    expect(record!.events.map((event) => (event.kind === 'job' ? event.externalId : event.kind))).toEqual(['a', 'b', 'd', 'worker']);
    expect(record!.events.map((event) => 'newQueueId' in event)).toEqual([false, true, false, false]); // q1 exists; d names none
    expect([...actor.queues.values()].map((queue) => queue.name).sort()).toEqual(['q1', 'q2']);
  });

  test('a worker event that would create a worker past the bound is refused; known workers still report', () => {
    const actor = new ConnectionActor(C, { ...limits, workersPerConnectionMax: 2 });
    ingest(actor, [workerEvent(C, T0, { externalId: 'w1' })]);
    const { reply } = ingest(actor, [
      workerEvent(C, T0, { externalId: 'w2' }),
      workerEvent(C, T0, { externalId: 'w3' }),
      workerEvent(C, T0 + 1, { externalId: 'w1', state: 'busy' }),
      jobEvent(C, T0, { externalId: 'j', workerId: 'w9', queue: null }),
    ]);
    expect(reply).toMatchObject({ accepted: 3, rejected: 1 });
    expect(reply.errors).toEqual([
      { index: 1, code: 'WORKER_LIMIT_EXCEEDED', message: "the connection already has 2 workers (WORKERS_PER_CONNECTION_MAX); worker 'w3' was not created" },
    ]);
  });

  test('a queue the connection has does not count again, and one new in the same batch counts once', () => {
    const actor = new ConnectionActor(C, { ...limits, queuesPerConnectionMax: 2 });
    const { reply } = ingest(actor, [
      jobEvent(C, T0, { externalId: 'a', queue: 'q1' }),
      jobEvent(C, T0, { externalId: 'b', queue: 'q1' }),
      queueEvent(C, T0, { name: 'q1' }),
      queueEvent(C, T0, { name: 'q2' }),
    ]);
    expect(reply).toMatchObject({ accepted: 4, rejected: 0 });
  });

  test('bound errors count against the 100 reported errors like validation errors', () => {
    const actor = new ConnectionActor(C, { ...limits, queuesPerConnectionMax: 1 });
    ingest(actor, [queueEvent(C, T0, { name: 'only' })]);
    const events = Array.from({ length: EVENT_ERRORS_REPORTED_MAX + 5 }, (_, index) => queueEvent(C, T0, { name: `q${index}` }));
    const { reply } = ingest(actor, events);
    expect(reply.rejected).toBe(EVENT_ERRORS_REPORTED_MAX + 5);
    expect(reply.errors).toHaveLength(EVENT_ERRORS_REPORTED_MAX);
    expect(reply.errors!.at(-1)!.index).toBe(EVENT_ERRORS_REPORTED_MAX - 1);
  });
});

describe('daily quota', () => {
  test('a used-up quota refuses the batch with the usage and a Retry-After in whole seconds to midnight UTC', () => {
    const actor = new ConnectionActor(C, { ...limits, dailyEventLimit: 1 });
    ingest(actor, [jobEvent(C, T0, { externalId: 'a' })]);
    const nowMs = Date.parse('2026-11-21T23:59:58.500Z');
    const error = (() => {
      try {
        actor.decideIngest([jobEvent(C, T0, { externalId: 'b' })], nowMs);
      } catch (caught) {
        return caught as DomainError;
      }
      throw new Error('expected a refusal');
    })();
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe('DAILY_LIMIT_EXCEEDED');
    expect(error.extraBody).toEqual({ usage: { used: 1, limit: 1, remaining: 0, resetAt: '2026-11-22T00:00:00.000Z' } });
    expect(error.headers).toEqual({ 'Retry-After': '2' });
  });

  test('Retry-After is at least 1 second', () => {
    const actor = new ConnectionActor(C, { ...limits, dailyEventLimit: 1 });
    ingest(actor, [jobEvent(C, T0, { externalId: 'a' })]);
    const nowMs = Date.parse('2026-11-21T23:59:59.999Z');
    const error = (() => {
      try {
        actor.decideIngest([jobEvent(C, T0, { externalId: 'b' })], nowMs);
      } catch (caught) {
        return caught as DomainError;
      }
      throw new Error('expected a refusal');
    })();
    expect(error.headers).toEqual({ 'Retry-After': '1' });
  });

  test('the limit reached mid-batch truncates the rest; the reply reports what remains after the batch', () => {
    const actor = new ConnectionActor(C, { ...limits, dailyEventLimit: 3 });
    expect(ingest(actor, [jobEvent(C, T0, { externalId: 'first' })]).reply.usage).toMatchObject({ used: 1, remaining: 2 });
    const { reply, record } = ingest(actor, [
      { not: 'an event' },
      jobEvent(C, T0, { externalId: 'a' }),
      jobEvent(C, T0, { externalId: 'a' }), // a duplicate: skipped, uses nothing
      jobEvent(C, T0, { externalId: 'b' }),
      jobEvent(C, T0, { externalId: 'c' }),
      jobEvent(C, T0, { externalId: 'd' }),
    ]);
    expect(reply).toMatchObject({ accepted: 2, rejected: 1, skipped: 1, truncated: 2 });
    expect(reply.usage).toEqual({ used: 3, limit: 3, remaining: 0, resetAt: '2026-11-22T00:00:00.000Z' });
    expect(record!.events).toHaveLength(2);
  });

  test('the bytes of the day are counted and start over at midnight UTC; a snapshot without bytes restores none', () => {
    const quota = new DailyQuota(10);
    quota.record(2, 300, T0);
    quota.record(1, 50, T0 + 1);
    expect(quota.bytesUsed(T0 + 2)).toBe(350);
    expect(quota.used(T0 + 2)).toBe(3);
    const nextDay = Date.parse('2026-11-22T00:00:00.000Z');
    expect(quota.bytesUsed(nextDay)).toBe(0);
    expect(quota.used(nextDay)).toBe(0);
    const restored = new DailyQuota(10);
    restored.restore({ ...quota.toSnapshot(), bytes: undefined } as never);
    expect(restored.bytesUsed(T0 + 2)).toBe(0);
    expect(restored.used(T0 + 2)).toBe(3);
  });
});

test('a job event without an attempt has its own dedup key, distinct from any attempt', () => {
  const base = { kind: 'job' as const, atMs: T0, framework: 'celery' as const, externalId: 'a', name: 'n', state: 'queued' as const };
  // the identity, then the content's fingerprint
  expect(dedupKeyOf(base)).toStartWith(`j\u0000a\u0000queued\u0000${T0}\u0000\u0000`);
  expect(dedupKeyOf({ ...base, attempt: 1 })).toStartWith(`j\u0000a\u0000queued\u0000${T0}\u00001\u0000`);
  expect(dedupKeyOf(base).split('\u0000').at(-1)).toBe(dedupKeyOf({ ...base, attempt: 1 }).split('\u0000').at(-1)!);
});

test('the fingerprint in a dedup key: the same content the same key; any field that differs, a new key; long texts by length, start and end', () => {
  const base = { kind: 'job' as const, atMs: T0, framework: 'celery' as const, externalId: 'a', name: 'n', state: 'failed' as const, attempt: 1 };
  const long = 'x'.repeat(1_000);
  const variants = [
    base,
    { ...base, queue: '' },
    { ...base, queue: 'q' },
    { ...base, workerId: 'q' },
    { ...base, name: 'm' },
    { ...base, framework: 'bullmq' as const },
    { ...base, maxRetries: 3 },
    { ...base, progress: 0.5 },
    { ...base, progress: 0.25 },
    { ...base, createdAtMs: T0 - 1 },
    { ...base, startedAtMs: T0 - 1 },
    { ...base, completedAtMs: T0 - 1 },
    { ...base, error: long },
    { ...base, error: `${long}x` },
    { ...base, error: `y${long.slice(1)}` },
    { ...base, error: `${long.slice(1)}y` },
    { ...base, stacktrace: 'trace' },
    { ...base, extensions: { eta: 1 } },
    { ...base, extensions: { eta: 2 } },
  ];
  const keys = variants.map((event) => dedupKeyOf(event));
  expect(new Set(keys).size).toBe(variants.length);
  expect(variants.map((event) => dedupKeyOf(structuredClone(event)))).toEqual(keys); // a copy, as replay decodes it
  // past 256 characters the middle is not read: the cost of a 50,000-character trace stays bounded
  expect(dedupKeyOf({ ...base, error: `${long.slice(0, 500)}y${long.slice(501)}` })).toBe(dedupKeyOf({ ...base, error: long }));
  const worker = { kind: 'worker' as const, atMs: T0, framework: 'celery' as const, externalId: 'w', hostname: 'h', state: 'online' as const };
  expect(new Set([worker, { ...worker, queues: ['a', 'b'] }, { ...worker, queues: ['ab'] }, { ...worker, activeJobs: 1 }, { ...worker, metadata: { a: 1 } }].map((event) => dedupKeyOf(event))).size).toBe(5);
  const queue = { kind: 'queue' as const, atMs: T0, framework: 'celery' as const, name: 'q', depth: 1 };
  expect(new Set([queue, { ...queue, depth: 2 }, { ...queue, consumers: 1 }, { ...queue, extensions: {} }].map((event) => dedupKeyOf(event))).size).toBe(4);
});
