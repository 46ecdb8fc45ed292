/**
 * The job controls and a job's runs: what the job system then reports lands in the right
 * attempt. A kill of a job waiting to retry ends it `failed` in the attempt that failed
 * (no new one); run now of a scheduled job starts its first attempt when it runs; a retry
 * now of a job waiting to retry runs the attempt that was due (no run added by hand),
 * where a retry of a failed job adds one.
 */
import { describe, expect, test } from 'bun:test';
import { T0 } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';
import { controlFixture, type ControlFixture } from './control-fixture.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** An event of job `externalId` of the fixture's queue, at `atMs`. */
const event = (f: ControlFixture, externalId: string, atMs: number, fields: Record<string, unknown>) =>
  jobEvent(f.c.id, atMs, { externalId, name: 'send', queue: 'emails', ...fields }, { framework: 'bullmq' });

/** A run that starts at `atMs` on worker w1 and ends a second later in `outcome`. */
const run = (f: ControlFixture, externalId: string, attempt: number, atMs: number, outcome: 'retrying' | 'completed' | 'failed') => [
  event(f, externalId, atMs, { state: 'active', attempt, workerId: 'w1', startedAt: iso(atMs) }),
  event(f, externalId, atMs + 1_000, {
    state: outcome,
    attempt,
    workerId: 'w1',
    startedAt: iso(atMs),
    ...(outcome === 'completed' ? { completedAt: iso(atMs + 1_000) } : { error: `Timeout ${attempt}` }),
  }),
];

async function doneOf(f: ControlFixture, path: string): Promise<void> {
  const asked = await f.post(path);
  expect(asked.status).toBeLessThan(300);
  const [command] = await f.commands();
  expect((await f.ack([{ id: command.id, status: 'done' }])).json).toEqual({ acked: 1 });
}

describe('the job controls and the attempt model', () => {
  test('a kill of a job waiting to retry ends it failed in the attempt that failed: no new attempt, its error kept', async () => {
    const f = await controlFixture();
    const start = T0 - 60_000;
    await f.ingest([...run(f, 'k', 1, start, 'retrying'), ...run(f, 'k', 2, start + 10_000, 'retrying')]);
    const id = f.jobId('k');
    await doneOf(f, `/api/jobs/${id}/kill`);
    // what the agents send once the job system moved it: failed, in the attempt that failed
    await f.ingest([event(f, 'k', T0, { state: 'failed', attempt: 2, error: 'Timeout 2' })]);
    const detail = (await f.get(`/api/jobs/${id}`)).json;
    expect(detail).toMatchObject({ state: 'failed', attempt: 2, manualRetries: 0, error: 'Timeout 2', lastCommand: { type: 'kill', status: 'done' } });
    expect(detail.attempts.map((each: { attempt: number; state: string; error: string }) => [each.attempt, each.state, each.error])).toEqual([
      [1, 'failed', 'Timeout 1'],
      [2, 'failed', 'Timeout 2'],
    ]);
    expect(detail.durationMs === null || detail.durationMs >= 0).toBe(true);
  });

  test('run now of a scheduled job starts attempt 1 when it runs: one attempt, nothing before it', async () => {
    const f = await controlFixture();
    const id = f.jobId('emails:1');
    await doneOf(f, `/api/jobs/${id}/promote`);
    expect((await f.get(`/api/jobs/${id}`)).json).toMatchObject({ state: 'scheduled', attempt: 1 });
    await f.ingest(run(f, 'emails:1', 1, T0, 'completed'));
    const detail = (await f.get(`/api/jobs/${id}`)).json;
    expect(detail).toMatchObject({ state: 'completed', attempt: 1, manualRetries: 0, durationMs: 1_000, error: null });
    expect(detail.attempts).toEqual([{ attempt: 1, state: 'completed', startedAt: iso(T0), finishedAt: iso(T0 + 1_000), workerId: 'w1', error: null, stacktrace: null }]);
  });

  test('a retry now of a job waiting to retry runs the attempt that was due: no run added by hand; a retry of a failed job adds one', async () => {
    const f = await controlFixture();
    const start = T0 - 60_000;
    await f.ingest([...run(f, 'soon', 1, start, 'retrying'), ...run(f, 'again', 1, start, 'failed')]);
    await doneOf(f, `/api/jobs/${f.jobId('soon')}/retry`);
    await doneOf(f, `/api/jobs/${f.jobId('again')}/retry`);
    await f.ingest([...run(f, 'soon', 2, T0, 'completed'), ...run(f, 'again', 2, T0, 'completed')]);
    const soon = (await f.get(`/api/jobs/${f.jobId('soon')}`)).json;
    expect(soon).toMatchObject({ state: 'completed', attempt: 2, manualRetries: 0, error: null, durationMs: 1_000 });
    expect(soon.attempts.map((each: { attempt: number; state: string }) => [each.attempt, each.state])).toEqual([
      [1, 'failed'],
      [2, 'completed'],
    ]);
    const again = (await f.get(`/api/jobs/${f.jobId('again')}`)).json;
    expect(again).toMatchObject({ state: 'completed', attempt: 2, manualRetries: 1, error: null, durationMs: 1_000 });
  });
});
