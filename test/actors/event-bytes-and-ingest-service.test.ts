/**
 * The byte estimates behind the per-connection budgets, exactly (replay must rebuild the
 * same totals), and the ingest service's path from API key to committed record.
 */
import { describe, expect, test } from 'bun:test';
import {
  EVENT_OVERHEAD_BYTES,
  eventBytes,
  HISTORY_ENTRY_BYTES,
  JOB_OVERHEAD_BYTES,
  jobBytes,
  jobGrowthBytes,
  ATTEMPT_ENTRY_BYTES,
  jsonBytes,
  jsonText,
  rememberJson,
} from '../../actors/ingest/event-bytes.ts';
import type { JobEvent } from '../../actors/ingest/normalized-event.ts';
import { sha256Hex } from '../../actors/accounts/secrets.ts';
import { ManualClock } from '../../actors/clock.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { Engine } from '../../actors/engine.ts';
import { connectionActorForKey, ingestEvents, ingestForConnection } from '../../actors/services/ingest-service.ts';
import { jobEvent } from '../support/events.ts';
import { historyFromPairs } from '../../actors/connection/job-history.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const base = { atMs: T0, framework: 'celery' as const };

describe('byte estimates', () => {
  test('the overheads are the documented ones', () => {
    expect([EVENT_OVERHEAD_BYTES, JOB_OVERHEAD_BYTES, HISTORY_ENTRY_BYTES]).toEqual([64, 700, 16]);
  });

  test('a job event: overhead plus every client string plus its serialized extensions', () => {
    const minimal: JobEvent = { kind: 'job', ...base, externalId: 'abc', name: 'tasks.x', state: 'queued' };
    expect(eventBytes(minimal)).toBe(64 + 3 + 7);
    const full: JobEvent = { ...minimal, queue: 'q1', workerId: 'w-1', error: 'boom!', stacktrace: 'at 1', extensions: { a: 1 } };
    expect(eventBytes(full)).toBe(64 + 3 + 7 + 2 + 3 + 5 + 4 + JSON.stringify({ a: 1 }).length);
  });

  test('a worker event counts its queues; a queue event its name', () => {
    expect(eventBytes({ kind: 'worker', ...base, externalId: 'w1', hostname: 'host', state: 'online' })).toBe(64 + 2 + 4);
    expect(eventBytes({ kind: 'worker', ...base, externalId: 'w1', hostname: 'host', state: 'online', queues: ['a', 'bcd'], metadata: { v: 'x' } })).toBe(
      64 + 2 + 4 + 1 + 3 + JSON.stringify({ v: 'x' }).length,
    );
    expect(eventBytes({ kind: 'queue', ...base, name: 'default', depth: 5 })).toBe(64 + 7);
  });

  test('a retained job: overhead, its large fields and 16 bytes per history entry', () => {
    const none = { error: null, stacktrace: null, extensions: null, args: null, result: null, progressData: null, logs: null, attempts: null };
    expect(jobBytes({ ...none, externalId: 'abc', history: [] })).toBe(700 + 3);
    expect(jobBytes({ ...none, externalId: 'abc', error: 'e', stacktrace: 'st', extensions: JSON.stringify({ a: 1 }), history: historyFromPairs([T0, 1, T0 + 1, 3]) })).toBe(
      700 + 3 + 1 + 2 + JSON.stringify({ a: 1 }).length + 2 * 16,
    );
    // texts count as their UTF-8 bytes
    expect(jobBytes({ ...none, externalId: 'abc', args: '["é"]', logs: '["a"]', result: '1', progressData: '{}', attempts: '[]', history: [] })).toBe(700 + 3 + 6 + 5 + 1 + 2 + 2);
  });

  test('what a job event can add: a whole job when new, else its large fields and one history entry', () => {
    const event: JobEvent = { kind: 'job', ...base, externalId: 'abcd', name: 'n', state: 'failed', error: 'xy', stacktrace: 'z', extensions: { b: 2 } };
    const large = 2 + 1 + JSON.stringify({ b: 2 }).length;
    expect(jobGrowthBytes(event, true)).toBe(700 + 4 + large + 16);
    expect(jobGrowthBytes(event, false)).toBe(large + 16);
    // what it carries as texts counts by their bytes; one naming an attempt may end a run, whose entry is kept
    const withPayload: JobEvent = { ...event, args: '{"é":1}', result: '2', logs: '["l"]', progressData: '{"p":1}', attempt: 2 };
    expect(jobGrowthBytes(withPayload, false)).toBe(large + 8 + 1 + 5 + 7 + 16 + ATTEMPT_ENTRY_BYTES);
    expect(eventBytes(withPayload) - eventBytes(event)).toBe(8 + 1 + 5 + 7);
  });

  test('an object is serialized once: a remembered text is used as is; null and undefined weigh nothing', () => {
    const measured = { a: 'bc' };
    expect(jsonBytes(measured)).toBe(JSON.stringify(measured).length);
    measured.a = 'a much longer value now';
    expect(jsonBytes(measured)).toBe(JSON.stringify({ a: 'bc' }).length);
    const remembered = { x: 1 };
    rememberJson(remembered, '{"x":1,"kept":"as remembered"}');
    expect(jsonBytes(remembered)).toBe('{"x":1,"kept":"as remembered"}'.length);
    expect(jsonText(remembered)).toBe('{"x":1,"kept":"as remembered"}');
    expect(jsonBytes(null)).toBe(0);
    expect(jsonBytes(undefined)).toBe(0);
  });
});

describe('ingestEvents', () => {
  async function engineWithConnection() {
    const appended: unknown[] = [];
    const engine = new Engine({
      clock: new ManualClock(T0),
      log: { append: async (record) => appended.push(record) },
      limits: { dailyEventLimit: 0, dedupKeysMax: 100, maxJobsPerConnection: 100, retentionMs: 86_400_000 },
    });
    await engine.commit({ t: 'connection.created', connection: { id: 'c1', name: 'prod', ownerId: 'u1', keyHash: sha256Hex('sk_good'), keyPrefix: 'sk_good', createdAtMs: T0 } });
    return { engine, appended };
  }

  test('accepted events are committed as one record and the reply counts them', async () => {
    const { engine, appended } = await engineWithConnection();
    const before = appended.length;
    const reply = await ingestEvents(engine, 'sk_good', [jobEvent('c1', T0 - 1_000), { not: 'an event' }]);
    expect(reply).toMatchObject({ accepted: 1, rejected: 1, skipped: 0, truncated: 0 });
    expect(appended.length).toBe(before + 1);
    expect(appended.at(-1)).toMatchObject({ t: 'ingest', connectionId: 'c1', receivedAtMs: T0 });
    expect(engine.connection('c1')!.jobs.size).toBe(1);
  });

  test('nothing accepted, nothing committed', async () => {
    const { engine, appended } = await engineWithConnection();
    const before = appended.length;
    expect((await ingestEvents(engine, 'sk_good', [{ not: 'an event' }])).accepted).toBe(0);
    expect(appended.length).toBe(before);
  });

  test('a missing or unknown key is 401 invalid or missing API key', async () => {
    const { engine } = await engineWithConnection();
    for (const key of [null, 'sk_unknown']) {
      const error = await ingestEvents(engine, key, [jobEvent('c1', T0)]).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('UNAUTHORIZED');
      expect((error as DomainError).message).toBe('invalid or missing API key');
    }
  });

  test('a connection deleted after its key was resolved (while the body arrived) is 401, and nothing is committed', async () => {
    const { engine, appended } = await engineWithConnection();
    const actor = connectionActorForKey(engine, 'sk_good');
    await engine.commit({ t: 'connection.deleted', connectionId: 'c1' });
    const before = appended.length;
    const error = await ingestForConnection(engine, actor, [jobEvent('c1', T0)]).catch((caught: unknown) => caught);
    expect((error as DomainError).code).toBe('UNAUTHORIZED');
    expect(appended.length).toBe(before);
    expect(actor.jobs.size).toBe(0);
  });

  test('a halted engine refuses before anything is decided', async () => {
    const engine = new Engine({
      clock: new ManualClock(T0),
      log: { append: async () => Promise.reject(new Error('disk gone')) },
      limits: { dailyEventLimit: 0, dedupKeysMax: 100, maxJobsPerConnection: 100, retentionMs: 86_400_000 },
      onHalt: () => {},
    });
    await engine.commit({ t: 'retention', atMs: T0 }).catch(() => {});
    expect(engine.halted).toBe(true);
    const error = await ingestEvents(engine, 'sk_good', []).catch((caught: unknown) => caught);
    expect((error as DomainError).code).toBe('SERVICE_UNAVAILABLE');
  });
});
