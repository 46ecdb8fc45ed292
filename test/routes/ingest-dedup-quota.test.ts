import { describe, expect, test } from 'bun:test';
import { testApp, T0 } from '../support/test-app.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { recordingLog, replayedAndRestored } from '../support/recording-log.ts';
import { dedupKeyOf } from '../../actors/ingest/dedup-key.ts';
import { validateEvent } from '../../actors/ingest/validate-event.ts';

/** An event as the service normalizes it (what its dedup key is made from). */
function normalized(raw: ReturnType<typeof jobEvent> | ReturnType<typeof workerEvent>) {
  const verdict = validateEvent(raw, raw.connectionId, T0 + 60_000);
  if (!verdict.ok) throw new Error(verdict.error.message);
  return verdict.event;
}

async function setup(dailyEventLimit: number) {
  const t = await testApp({ limits: { dailyEventLimit } });
  const connection = await t.createConnection(await t.login(), 'prod');
  return { t, connection };
}

describe('ingest: duplicates', () => {
  test('a duplicate is skipped inside one batch and across batches, and not counted against the quota', async () => {
    const { t, connection } = await setup(100);
    const event = jobEvent(connection.id, T0, { state: 'active', attempt: 1 });
    const first = await t.ingest(connection.apiKey, [event, event]);
    expect(first.json).toMatchObject({ accepted: 1, skipped: 1 });
    const second = await t.ingest(connection.apiKey, [event]);
    expect(second.json).toMatchObject({ accepted: 0, skipped: 1 });
    expect(second.json.usage.used).toBe(1);
  });

  test('the same instant written differently is the same event', async () => {
    const { t, connection } = await setup(100);
    const a = { ...jobEvent(connection.id, T0), timestamp: '2026-11-21T10:00:00Z' };
    const b = { ...jobEvent(connection.id, T0), timestamp: '2026-11-21T12:00:00.000+02:00' };
    expect((await t.ingest(connection.apiKey, [a, b])).json).toMatchObject({ accepted: 1, skipped: 1 });
  });

  test('an event is a duplicate when one of the same identity and the same content was accepted: job (externalId, state, timestamp, attempt), worker (externalId, state, timestamp), queue (name, timestamp)', async () => {
    const { t, connection } = await setup(100);
    const response = await t.ingest(connection.apiKey, [
      jobEvent(connection.id, T0, { attempt: 1 }),
      jobEvent(connection.id, T0, { attempt: 2 }), // other attempt: new
      jobEvent(connection.id, T0, { attempt: 1, state: 'active' }), // other state: new
      jobEvent(connection.id, T0, { attempt: 1 }), // the same again: duplicate
      workerEvent(connection.id, T0),
      workerEvent(connection.id, T0), // duplicate
      workerEvent(connection.id, T0 + 1),
      queueEvent(connection.id, T0),
      queueEvent(connection.id, T0), // duplicate
    ]);
    expect(response.json).toMatchObject({ accepted: 6, skipped: 3 });
  });

  test('an event of the same identity that says more is applied, not skipped: a scheduled job then with its eta in the same millisecond', async () => {
    const { t, connection } = await setup(100);
    const scheduled = { state: 'scheduled', attempt: 1, extensions: { bullmqState: 'delayed' } };
    const eta = '2026-11-21T10:05:00.000Z';
    const withEta = { ...scheduled, extensions: { bullmqState: 'delayed', eta } };
    // in one batch, as BullMQ's `added` and `delayed` entries arrive
    const first = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, scheduled), jobEvent(connection.id, T0, withEta)]);
    expect(first.json).toMatchObject({ accepted: 2, skipped: 0, usage: { used: 2 } });
    const job = t.engine.connection(connection.id)!.jobs.getByExternalId('task-1')!;
    const cookie = await t.login();
    const detail = (await t.request('GET', `/api/jobs/${job.id}`, { headers: { cookie } })).json;
    expect(detail.scheduledFor).toBe(eta);
    expect(detail.stateHistory.map((entry: { state: string }) => entry.state)).toEqual(['scheduled']);
    // across batches too; and either, sent again, is an exact repeat: skipped and not counted
    const again = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, withEta), jobEvent(connection.id, T0, scheduled)]);
    expect(again.json).toMatchObject({ accepted: 0, skipped: 2, usage: { used: 2 } });
  });

  test('events of one instant complement each other whatever their order: the later one without the eta keeps it', async () => {
    const { t, connection } = await setup(100);
    const eta = '2026-11-21T10:05:00.000Z';
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { state: 'scheduled', extensions: { bullmqState: 'delayed', eta } })]);
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { state: 'scheduled', extensions: { bullmqState: 'delayed', jobId: '7' } })]);
    const job = t.engine.connection(connection.id)!.jobs.getByExternalId('task-1')!;
    expect(JSON.parse(job.extensions!)).toEqual({ bullmqState: 'delayed', eta, jobId: '7' });
    // a newer event still replaces them whole
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0 + 1, { state: 'queued', extensions: { bullmqState: 'waiting' } })]);
    expect(JSON.parse(t.engine.connection(connection.id)!.jobs.getByExternalId('task-1')!.extensions!)).toEqual({ bullmqState: 'waiting' });
  });

  test('replay and a snapshot keep the same duplicates and the same job', async () => {
    const log = recordingLog();
    const t = await testApp({ log, limits: { dailyEventLimit: 100 } });
    const connection = await t.createConnection(await t.login(), 'prod');
    const eta = '2026-11-21T10:05:00.000Z';
    const events = [
      jobEvent(connection.id, T0, { state: 'scheduled' }),
      jobEvent(connection.id, T0, { state: 'scheduled', extensions: { eta } }),
      workerEvent(connection.id, T0, { activeJobs: 1 }),
      workerEvent(connection.id, T0, { activeJobs: 2 }),
    ];
    expect((await t.ingest(connection.apiKey, events)).json).toMatchObject({ accepted: 4, skipped: 0 });
    const live = t.engine.connection(connection.id)!;
    for (const engine of replayedAndRestored(t.engine, log.records)) {
      const actor = engine.connection(connection.id)!;
      expect(actor.dedup.toSnapshot()).toEqual(live.dedup.toSnapshot());
      expect(actor.jobs.getByExternalId('task-1')).toEqual(live.jobs.getByExternalId('task-1')!);
      for (const event of events) expect(actor.dedup.has(dedupKeyOf(normalized(event)))).toBe(true);
    }
  });

  test('the dedup memory is bounded: the oldest keys are forgotten first', async () => {
    const t = await testApp({ limits: { dailyEventLimit: 0, dedupKeysMax: 2 } });
    const connection = await t.createConnection(await t.login(), 'prod');
    const events = [0, 1, 2].map((i) => jobEvent(connection.id, T0 + i));
    await t.ingest(connection.apiKey, events);
    expect((await t.ingest(connection.apiKey, [events[2]])).json.skipped).toBe(1);
    expect((await t.ingest(connection.apiKey, [events[0]])).json.accepted).toBe(1);
  });
});

describe('ingest: daily quota', () => {
  test('usage reports used, limit, remaining and the next UTC midnight', async () => {
    const { t, connection } = await setup(10);
    const response = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)]);
    expect(response.json.usage).toEqual({ used: 1, limit: 10, remaining: 9, resetAt: '2026-11-22T00:00:00.000Z' });
  });

  test('the limit reached mid-batch truncates the rest with status 200', async () => {
    const { t, connection } = await setup(5);
    const events = Array.from({ length: 8 }, (_, i) => jobEvent(connection.id, T0 + i, { externalId: `j${i}` }));
    const response = await t.ingest(connection.apiKey, events);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ accepted: 5, truncated: 3, usage: { used: 5, remaining: 0 } });
  });

  test('rejected and skipped events do not use the quota', async () => {
    const { t, connection } = await setup(2);
    const good = jobEvent(connection.id, T0);
    const response = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { progress: 5 }), good, good, jobEvent(connection.id, T0 + 1)]);
    expect(response.json).toMatchObject({ accepted: 2, rejected: 1, skipped: 1, truncated: 0 });
  });

  test('a request with nothing remaining is 429 with usage and Retry-After until midnight UTC; data stays', async () => {
    const { t, connection } = await setup(1);
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)]);
    const limited = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0 + 1)]);
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('DAILY_LIMIT_EXCEEDED');
    expect(limited.json.usage).toEqual({ used: 1, limit: 1, remaining: 0, resetAt: '2026-11-22T00:00:00.000Z' });
    expect(limited.headers.get('retry-after')).toBe(String(14 * 3600)); // T0 is 10:00 UTC
    expect(t.engine.connection(connection.id)!.jobs.size).toBe(1);
  });

  test('only job events count: worker and queue events are accepted without spending the quota', async () => {
    const { t, connection } = await setup(2);
    const response = await t.ingest(connection.apiKey, [
      workerEvent(connection.id, T0),
      jobEvent(connection.id, T0, { externalId: 'a' }),
      queueEvent(connection.id, T0),
      workerEvent(connection.id, T0 + 1, { state: 'busy' }),
    ]);
    expect(response.json).toMatchObject({ accepted: 4, truncated: 0, usage: { used: 1, remaining: 1 } });
  });

  test('past the limit mid-batch only job events are truncated; worker and queue events go on', async () => {
    const { t, connection } = await setup(1);
    const response = await t.ingest(connection.apiKey, [
      jobEvent(connection.id, T0, { externalId: 'a' }),
      jobEvent(connection.id, T0, { externalId: 'b' }),
      workerEvent(connection.id, T0),
      queueEvent(connection.id, T0),
    ]);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ accepted: 3, truncated: 1, usage: { used: 1, remaining: 0 } });
  });

  test('with the quota spent, a request of worker and queue events alone is accepted, one with a job event is 429', async () => {
    const { t, connection } = await setup(1);
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'a' })]);
    const heartbeats = await t.ingest(connection.apiKey, [workerEvent(connection.id, T0 + 1), queueEvent(connection.id, T0 + 1)]);
    expect(heartbeats.status).toBe(200);
    expect(heartbeats.json).toMatchObject({ accepted: 2, truncated: 0, usage: { used: 1, remaining: 0 } });
    expect(t.engine.connection(connection.id)!.workers.size).toBe(1);
    const withJob = await t.ingest(connection.apiKey, [workerEvent(connection.id, T0 + 2), jobEvent(connection.id, T0 + 2, { externalId: 'b' })]);
    expect(withJob.status).toBe(429);
    expect(withJob.json.error.code).toBe('DAILY_LIMIT_EXCEEDED');
  });

  test('the quota resets at midnight UTC', async () => {
    const { t, connection } = await setup(1);
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)]);
    t.clock.set(Date.parse('2026-11-22T00:00:00.000Z'));
    const next = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0 + 1)]);
    expect(next.status).toBe(200);
    expect(next.json.usage).toMatchObject({ used: 1, remaining: 0, resetAt: '2026-11-23T00:00:00.000Z' });
  });

  test('a limit of 0 means unlimited', async () => {
    const { t, connection } = await setup(0);
    const events = Array.from({ length: 1000 }, (_, i) => jobEvent(connection.id, T0, { externalId: `j${i}` }));
    for (let round = 0; round < 12; round++) {
      events.forEach((event, i) => (event.job.externalId = `r${round}-${i}`));
      expect((await t.ingest(connection.apiKey, events)).json.accepted).toBe(1000);
    }
  });
});
