/**
 * One tenant must not exhaust the service's memory or disk: they are bounded by bytes, not
 * only by event counts.
 * Budgets are estimates (actors/ingest/event-bytes.ts); these tests hold them to their
 * rules: refused per event with a code, never passed, rebuilt by replay.
 */
import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine } from '../../actors/engine.ts';
import { jobBytes } from '../../actors/ingest/event-bytes.ts';
import { recordingLog } from '../support/recording-log.ts';
import { T0, testApp } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';

const DAY_MS = 86_400_000;


async function setup(limits: { connectionMemoryBytesMax?: number; dailyIngestBytesMax?: number }) {
  const log = recordingLog();
  const t = await testApp({ limits: { dailyEventLimit: 0, ...limits }, log });
  const c = await t.createConnection(await t.login(), 'budgeted');
  return { t, c, log, actor: t.engine.connection(c.id)! };
}

const sumOfJobs = (actor: { jobs: { values(): IterableIterator<Parameters<typeof jobBytes>[0]> } }) => [...actor.jobs.values()].reduce((sum, job) => sum + jobBytes(job), 0);

describe('memory budget per connection (CONNECTION_MEMORY_MB)', () => {
  test('jobs past the budget are refused with STORAGE_LIMIT_EXCEEDED; the estimate never passes it', async () => {
    const budget = 20_000;
    const { t, c, actor } = await setup({ connectionMemoryBytesMax: budget });
    const big = (i: number) => jobEvent(c.id, T0, { externalId: `big-${i}`, state: 'failed', stacktrace: 'x'.repeat(5_000) });
    const response = await t.ingest(c.apiKey, Array.from({ length: 6 }, (_, i) => big(i)));
    expect(response.json).toMatchObject({ accepted: 3, rejected: 3 });
    expect(response.json.errors[0]).toMatchObject({ index: 3, code: 'STORAGE_LIMIT_EXCEEDED', message: expect.stringContaining('CONNECTION_MEMORY_MB') });
    expect(actor.jobs.size).toBe(3);
    expect(actor.jobs.retainedBytes).toBeLessThanOrEqual(budget);
    expect(actor.jobs.retainedBytes).toBe(sumOfJobs(actor));

    // An update that adds a large field to a known job counts too; a small one still fits.
    const grow = await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 1, { externalId: 'big-0', state: 'failed', error: 'e'.repeat(5_000) })]);
    expect(grow.json.errors?.[0]).toMatchObject({ code: 'STORAGE_LIMIT_EXCEEDED' });
    expect((await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 2, { externalId: 'big-0', state: 'retrying' })])).json).toMatchObject({ accepted: 1 });
    expect(actor.jobs.retainedBytes).toBe(sumOfJobs(actor));

    // Nothing accepted was evicted; retention frees room and new jobs fit again.
    expect(actor.jobs.getByExternalId('big-0')).toBeDefined();
    t.clock.set(T0 + DAY_MS + 1000);
    await t.engine.commit({ t: 'retention', atMs: t.clock.nowMs() });
    expect(actor.jobs.retainedBytes).toBe(0);
    expect((await t.ingest(c.apiKey, [big(9)].map((event) => ({ ...event, timestamp: new Date(t.clock.nowMs()).toISOString() })))).json).toMatchObject({ accepted: 1 });
  });
});

describe('daily ingest bytes per connection (DAILY_INGEST_MB)', () => {
  test('events past the day\'s bytes are refused with DAILY_BYTES_EXCEEDED until midnight UTC; replay rebuilds the count', async () => {
    const { t, c, log, actor } = await setup({ dailyIngestBytesMax: 5_000 });
    const withError = (i: number, atMs = T0) => jobEvent(c.id, atMs, { externalId: `e-${i}`, state: 'failed', error: 'x'.repeat(1_000) });
    const response = await t.ingest(c.apiKey, Array.from({ length: 6 }, (_, i) => withError(i)));
    expect(response.json).toMatchObject({ accepted: 4, rejected: 2 });
    expect(response.json.errors[0]).toMatchObject({ index: 4, code: 'DAILY_BYTES_EXCEEDED', message: expect.stringContaining('2026-11-22T00:00:00.000Z') });
    const usedToday = actor.quota.bytesUsed(T0);
    expect(usedToday).toBeGreaterThan(4_000);
    expect(usedToday).toBeLessThanOrEqual(5_000);

    // The same count after replaying the log into a fresh engine (the quota's bytes are
    // derived from records).
    const replayed = new Engine({ clock: new ManualClock(T0), log: { append: async () => 0 }, limits: t.engine.limits });
    for (const record of log.records) replayed.evolve(structuredClone(record));
    expect(replayed.connection(c.id)!.quota.bytesUsed(T0)).toBe(usedToday);
    expect(replayed.connection(c.id)!.jobs.retainedBytes).toBe(actor.jobs.retainedBytes);

    // A new UTC day starts from zero.
    const tomorrow = Date.parse('2026-11-22T00:00:01.000Z');
    t.clock.set(tomorrow);
    expect((await t.ingest(c.apiKey, [withError(10, tomorrow)])).json).toMatchObject({ accepted: 1, rejected: 0 });
  });

  test('0 means unlimited', async () => {
    const { t, c } = await setup({ dailyIngestBytesMax: 0, connectionMemoryBytesMax: 0 });
    const events = Array.from({ length: 20 }, (_, i) => jobEvent(c.id, T0, { externalId: `u-${i}`, stacktrace: 'x'.repeat(50_000) }));
    expect((await t.ingest(c.apiKey, events)).json).toMatchObject({ accepted: 20, rejected: 0 });
  });
});
