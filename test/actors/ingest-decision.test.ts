/**
 * The ingest decision of one connection, without HTTP: what counts as a duplicate for
 * each kind of event, which ids a batch gets for what it sees first, how many errors
 * are reported, what an unlimited quota reports, and that the quota survives a snapshot.
 */
import { describe, expect, test } from 'bun:test';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { DailyQuota } from '../../actors/connection/daily-quota.ts';
import { T0 } from '../support/test-app.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';

const C = 'conn-1';
const limits = { dailyEventLimit: 10_000, dedupKeysMax: 1_000, maxJobsPerConnection: 1_000, retentionMs: 86_400_000 };

function ingest(actor: ConnectionActor, events: unknown[], nowMs = T0) {
  const decision = actor.decideIngest(events, nowMs);
  if (decision.record !== null) actor.evolve(decision.record);
  return decision;
}

describe('duplicates, per kind of event', () => {
  test('a job event repeats only with the same job, state, time and attempt', () => {
    const actor = new ConnectionActor(C, limits);
    const { reply } = ingest(actor, [
      jobEvent(C, T0, { externalId: 'a', state: 'active', attempt: 1 }),
      jobEvent(C, T0, { externalId: 'a', state: 'active', attempt: 1 }),
      jobEvent(C, T0, { externalId: 'a', state: 'active', attempt: 2 }),
      jobEvent(C, T0, { externalId: 'a', state: 'failed', attempt: 2 }),
    ]);
    expect(reply).toMatchObject({ accepted: 3, skipped: 1 });
  });

  test('a worker event repeats with the same worker, state and time; another worker or state is new', () => {
    const actor = new ConnectionActor(C, limits);
    const { reply } = ingest(actor, [
      workerEvent(C, T0, { externalId: 'w1', state: 'online' }),
      workerEvent(C, T0, { externalId: 'w1', state: 'online' }),
      workerEvent(C, T0, { externalId: 'w1', state: 'offline' }),
      workerEvent(C, T0, { externalId: 'w2', state: 'online' }),
    ]);
    expect(reply).toMatchObject({ accepted: 3, skipped: 1 });
  });

  test('a queue snapshot repeats with the same queue and time; another queue is new', () => {
    const actor = new ConnectionActor(C, limits);
    const { reply } = ingest(actor, [queueEvent(C, T0, { name: 'mail' }), queueEvent(C, T0, { name: 'mail' }), queueEvent(C, T0, { name: 'video' })]);
    expect(reply).toMatchObject({ accepted: 2, skipped: 1 });
    const again = ingest(actor, [queueEvent(C, T0, { name: 'video' }), queueEvent(C, T0 + 1, { name: 'video' })]);
    expect(again.reply).toMatchObject({ accepted: 1, skipped: 1 });
  });
});

describe('ids for what a batch sees first', () => {
  test('a new job, worker or queue gets one id in its batch, and a known one gets none', () => {
    const actor = new ConnectionActor(C, limits);
    const first = actor.decideIngest(
      [
        jobEvent(C, T0, { externalId: 'a', queue: 'mail' }),
        jobEvent(C, T0 + 1, { externalId: 'a', state: 'active', queue: 'mail' }),
        workerEvent(C, T0, { externalId: 'w1' }),
        workerEvent(C, T0 + 1, { externalId: 'w1', state: 'offline' }),
        queueEvent(C, T0, { name: 'video' }),
        queueEvent(C, T0 + 1, { name: 'video' }),
      ],
      T0,
    ).record!;
    const [jobA, jobA2, worker, worker2, queue, queue2] = first.events as unknown as Array<Record<string, unknown>>;
    expect(typeof jobA!.newJobId).toBe('string');
    expect(typeof jobA!.newQueueId).toBe('string');
    expect(jobA2!.newJobId).toBeUndefined();
    expect(jobA2!.newQueueId).toBeUndefined();
    expect(typeof worker!.newWorkerId).toBe('string');
    expect(worker2!.newWorkerId).toBeUndefined();
    expect(typeof queue!.newQueueId).toBe('string');
    expect(queue2!.newQueueId).toBeUndefined();
    actor.evolve(first);

    const later = actor.decideIngest(
      [jobEvent(C, T0 + 5, { externalId: 'a', state: 'completed', queue: 'mail' }), workerEvent(C, T0 + 5, { externalId: 'w1' }), queueEvent(C, T0 + 5, { name: 'video' })],
      T0,
    ).record!;
    for (const event of later.events as unknown as Array<Record<string, unknown>>) {
      expect([event.newJobId, event.newWorkerId, event.newQueueId]).toEqual([undefined, undefined, undefined]);
    }
  });
});

describe('the reply', () => {
  test('errors: the first 100 rejected events are reported with their index; none means no errors field; nothing accepted means no record', () => {
    const actor = new ConnectionActor(C, limits);
    const bad = Array.from({ length: 101 }, () => ({ type: 'nonsense' }));
    const decision = actor.decideIngest(bad, T0);
    expect(decision.record).toBeNull();
    expect(decision.reply.rejected).toBe(101);
    expect(decision.reply.errors!.map((error) => error.index)).toEqual(Array.from({ length: 100 }, (_, index) => index));
    expect(decision.reply.errors![0]).toMatchObject({ index: 0, code: expect.any(String), message: expect.any(String) });

    const clean = actor.decideIngest([jobEvent(C, T0)], T0);
    expect(clean.reply.errors).toBeUndefined();
    expect(clean.record).not.toBeNull();
  });

  test('an unlimited quota keeps reporting the largest remaining count after accepting', () => {
    const actor = new ConnectionActor(C, { ...limits, dailyEventLimit: 0 });
    const { reply } = ingest(actor, [jobEvent(C, T0, { externalId: 'a' }), jobEvent(C, T0, { externalId: 'b' })]);
    expect(reply.usage).toMatchObject({ used: 2, limit: 0, remaining: Number.MAX_SAFE_INTEGER });
  });

  test('a used-up quota refuses the batch with the documented message and a Retry-After until midnight UTC', () => {
    const actor = new ConnectionActor(C, { ...limits, dailyEventLimit: 1 });
    ingest(actor, [jobEvent(C, T0, { externalId: 'a' })]);
    const refused = (() => {
      try {
        actor.decideIngest([jobEvent(C, T0, { externalId: 'b' })], T0);
      } catch (error) {
        return error as { message: string; code: string; headers?: Record<string, string> };
      }
    })();
    expect(refused?.message).toBe('daily event limit reached; previously ingested data is preserved');
  });
});

describe('daily quota', () => {
  test('replaying the records rebuilds the same usage: only their job events count', () => {
    const actor = new ConnectionActor(C, { ...limits, dailyEventLimit: 5 });
    const batches = [
      [workerEvent(C, T0, { externalId: 'w1' }), jobEvent(C, T0, { externalId: 'a' }), queueEvent(C, T0, { name: 'mail' })],
      [workerEvent(C, T0 + 1, { externalId: 'w1', state: 'busy' }), jobEvent(C, T0 + 1, { externalId: 'a', state: 'active' })],
      [queueEvent(C, T0 + 2, { name: 'mail' }), workerEvent(C, T0 + 2, { externalId: 'w2' })],
    ];
    const records = batches.map((events) => ingest(actor, events).record!);
    expect(actor.quota.usage(T0).used).toBe(2);
    const replayed = new ConnectionActor(C, { ...limits, dailyEventLimit: 5 });
    for (const record of records) replayed.evolve(structuredClone(record));
    expect(replayed.quota.usage(T0)).toEqual(actor.quota.usage(T0));
    expect(replayed.quota.bytesUsed(T0)).toBe(actor.quota.bytesUsed(T0));
    expect(replayed.quota.bytesUsed(T0)).toBeGreaterThan(0);
  });
  test('a snapshot restores the day and the count; a new UTC day starts at zero', () => {
    const quota = new DailyQuota(10);
    quota.record(3, 300, T0);
    quota.record(2, 200, T0 + 1000);
    const restored = new DailyQuota(10);
    restored.restore(quota.toSnapshot());
    expect(restored.used(T0)).toBe(5);
    expect(restored.remaining(T0)).toBe(5);
    restored.record(1, 100, T0 + 86_400_000);
    expect(restored.used(T0 + 86_400_000)).toBe(1);
    restored.record(1, 100, T0 + 86_400_000);
    expect(restored.used(T0 + 86_400_000)).toBe(2);
  });
});
