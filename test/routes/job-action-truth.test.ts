/**
 * What a job shows after a revoke or retry: the contract's answer at once (`cancelled`,
 * `retrying`), said to be requested while the agent has not reported; the job system's state
 * again when the agent reports the command refused or no outcome comes within the wait, with
 * the refusal or expiry in its history; and nothing the job system reported meanwhile lost.
 * The same after replaying the log and restoring a snapshot.
 */
import { describe, expect, test } from 'bun:test';
import { recordingLog, replayedAndRestored } from '../support/recording-log.ts';
import { testApp, T0 } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';
import { toJobDetail } from '../../actors/views/job-view.ts';
import { NO_RELATIONS } from '../../actors/connection/job-links.ts';
import type { Engine } from '../../actors/engine.ts';

const REFUSAL = 'the job is running in Sidekiq process host:1:abc: open-source Sidekiq cannot stop a running job safely, so this run goes on';

/** One active job (queued at T0 - 20 s, active at T0 - 10 s) of a connection, and the routes a dashboard and an agent use. */
async function withActiveJob(options: { log?: ReturnType<typeof recordingLog>; commandConfirmMs?: number } = {}) {
  const t = await testApp({ log: options.log, limits: { dailyEventLimit: 0, commandConfirmMs: options.commandConfirmMs } });
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  const event = (atMs: number, job: Record<string, unknown>) => jobEvent(c.id, atMs, { externalId: 'job-1', framework: 'sidekiq', ...job }, { framework: 'sidekiq' });
  await t.ingest(c.apiKey, [event(T0 - 20_000, { state: 'queued' }), event(T0 - 10_000, { state: 'active', startedAt: new Date(T0 - 10_000).toISOString(), workerId: 'w1', progress: 0.2 })]);
  const id = t.engine.connection(c.id)!.jobs.getByExternalId('job-1')!.id;
  const agent = { authorization: `Bearer ${c.apiKey}` };
  return {
    t,
    c,
    id,
    event,
    report: (events: unknown[]) => t.ingest(c.apiKey, events),
    act: async (action: 'revoke' | 'retry') => (await t.request('POST', `/api/jobs/${id}/${action}`, { headers: { cookie } })).json,
    detail: async () => (await t.request('GET', `/api/jobs/${id}`, { headers: { cookie } })).json,
    listed: async () => (await t.request('GET', '/api/jobs?limit=10', { headers: { cookie } })).json.data.find((job: { id: string }) => job.id === id),
    commands: async () => (await t.request('GET', '/api/agent/commands', { headers: agent })).json.data as Array<{ id: string }>,
    ack: async (outcomes: unknown[]) => (await t.request('POST', '/api/agent/commands/ack', { body: { outcomes }, headers: agent })).json,
    queue: async () => (await t.request('GET', '/api/queues?timeRange=1h', { headers: { cookie } })).json.data.find((queue: { name: string }) => queue.name === 'default'),
  };
}

const states = (detail: { stateHistory: Array<{ state: string; note?: string }> }) => detail.stateHistory.map((entry) => (entry.note === undefined ? entry.state : `${entry.state} (${entry.note})`));

describe('a revoke the job system refuses', () => {
  test('answers cancelled at once; while the agent has not reported, the detail and the list say a revoke is requested', async () => {
    const { act, detail, listed } = await withActiveJob();
    expect(await act('revoke')).toEqual({ id: expect.any(String), success: true, state: 'cancelled' });
    const waiting = await detail();
    expect(waiting).toMatchObject({ state: 'cancelled', lastCommand: { type: 'revoke', status: 'pending', reason: null } });
    expect(states(waiting)).toEqual(['queued', 'active', 'cancelled (revoke requested)']);
    expect(await listed()).toMatchObject({ state: 'cancelled', lastCommand: { type: 'revoke', status: 'pending' } });
  });

  test('refused by the agent, the job is active again as the job system last reported, and its history says why', async () => {
    const { t, act, commands, ack, detail, listed } = await withActiveJob();
    await act('revoke');
    const [command] = await commands();
    t.clock.advance(1_500);
    expect(await ack([{ id: command!.id, status: 'failed', reason: REFUSAL }])).toEqual({ acked: 1 });
    const refused = await detail();
    expect(refused).toMatchObject({ state: 'active', previousState: 'queued', stateChangedAt: new Date(T0 - 10_000).toISOString(), workerId: 'w1' });
    expect(refused.lastCommand).toMatchObject({ type: 'revoke', status: 'failed', reason: REFUSAL, completedAt: new Date(T0 + 1_500).toISOString() });
    expect(states(refused)).toEqual(['queued', 'active', 'active (revoke requested)', `active (revoke refused: ${REFUSAL})`]);
    expect(refused.stateHistory.slice(2).map((entry: { timestamp: string }) => entry.timestamp)).toEqual([new Date(T0).toISOString(), new Date(T0 + 1_500).toISOString()]);
    expect(await listed()).toMatchObject({ state: 'active', lastCommand: { status: 'failed', reason: REFUSAL } });
  });

  test('what the job system reported while the revoke was pending is not lost, even timed before the revoke: refused, the job shows it', async () => {
    const { t, act, commands, ack, detail, report, event, queue } = await withActiveJob();
    await act('revoke');
    // the run failed just before the revoke by the job system's clock; its event arrives after
    await report([event(T0 - 100, { state: 'retrying', error: 'RuntimeError: failed after 2s', attempt: 1, progress: 0.9 })]);
    // the newest of the job system's events: its facts are the job's, only the state waits for the agent
    expect(await detail()).toMatchObject({ state: 'cancelled', error: 'RuntimeError: failed after 2s', progress: 0.9, lastCommand: { status: 'pending' } });
    const [command] = await commands();
    t.clock.advance(1_000);
    await ack([{ id: command!.id, status: 'failed', reason: REFUSAL }]);
    expect(states(await detail())).toEqual(['queued', 'active', 'retrying', 'retrying (revoke requested)', `retrying (revoke refused: ${REFUSAL})`]);
    // and later events of the job system, older than the revoke or not, move it as they would have without it
    await report([event(T0 - 50, { state: 'queued', attempt: 2 })]);
    expect((await detail()).state).toBe('queued');
    await report([event(T0 + 2_000, { state: 'active', attempt: 2 }), event(T0 + 3_000, { state: 'completed', completedAt: new Date(T0 + 3_000).toISOString(), attempt: 2 })]);
    expect(await detail()).toMatchObject({ state: 'completed', attempt: 2 });
    expect((await queue()).failureRate).toBe(0);
  });

  test('a job that finished while the revoke was pending is counted in its queue once, when the refusal shows it', async () => {
    const { t, act, commands, ack, report, event, queue } = await withActiveJob();
    await act('revoke');
    await report([event(T0 - 10, { state: 'completed', completedAt: new Date(T0 - 10).toISOString() })]);
    expect((await queue()).throughput).toBeNull(); // hidden behind the revoke, not counted yet
    const [command] = await commands();
    t.clock.advance(1_000);
    await ack([{ id: command!.id, status: 'failed', reason: 'already finished' }]);
    expect((await queue()).throughput).toBeGreaterThan(0);
    const counted = (await queue()).healthBar.buckets.reduce((sum: number, bucket: { succeeded: number }) => sum + bucket.succeeded, 0);
    expect(counted).toBe(1);
  });

  test('carried out, the job stays cancelled; a late event older than the revoke does not move it back', async () => {
    const { t, act, commands, ack, detail, report, event } = await withActiveJob();
    await act('revoke');
    const [command] = await commands();
    await ack([{ id: command!.id, status: 'done' }]);
    await report([event(T0 - 5_000, { state: 'active', progress: 0.5 })]);
    const done = await detail();
    expect(done).toMatchObject({ state: 'cancelled', progress: 0.5, lastCommand: { status: 'done' } });
    expect(states(done)).toEqual(['queued', 'active', 'cancelled (revoke requested)']);
    expect(t.engine.connection((await detail()).connectionId)!.commands.size).toBe(0);
  });
});

describe('a retry the job system refuses', () => {
  test('the job is failed again, with "retry refused" in its history; its failure is not counted twice', async () => {
    const { t, act, commands, ack, detail, report, event, listed, queue } = await withActiveJob();
    await report([event(T0 - 5_000, { state: 'failed', error: 'boom', completedAt: new Date(T0 - 5_000).toISOString() })]);
    const failuresBefore = (await queue()).failureRate;
    expect(await act('retry')).toMatchObject({ success: true, state: 'retrying' });
    expect(await listed()).toMatchObject({ state: 'retrying', lastCommand: { type: 'retry', status: 'pending' } });
    const [command] = await commands();
    t.clock.advance(700);
    const reason = "not in Sidekiq's retry or dead set (already retried, deleted, or trimmed from the dead set)";
    await ack([{ id: command!.id, status: 'failed', reason }]);
    const refused = await detail();
    expect(refused).toMatchObject({ state: 'failed', error: 'boom', lastCommand: { type: 'retry', status: 'failed', reason } });
    expect(states(refused)).toEqual(['queued', 'active', 'failed', 'failed (retry requested)', `failed (retry refused: ${reason})`]);
    expect((await queue()).failureRate).toBe(failuresBefore);
    const failures = (await queue()).healthBar.buckets.reduce((sum: number, bucket: { failed: number }) => sum + bucket.failed, 0);
    expect(failures).toBe(1);
  });

  test('a revoke refused after a retry was asked takes back only its own entry: the job shows the retry, still pending', async () => {
    const { t, act, commands, ack, detail } = await withActiveJob();
    await act('revoke');
    t.clock.advance(1_000);
    await act('retry');
    const [revoke] = await commands();
    await ack([{ id: revoke!.id, status: 'failed', reason: 'too late' }]);
    const shown = await detail();
    expect(shown).toMatchObject({ state: 'retrying', lastCommand: { type: 'retry', status: 'pending' } });
    expect(states(shown)).toEqual(['queued', 'active', 'active (revoke requested)', 'retrying (retry requested)', 'retrying (revoke refused: too late)']);
  });
});

describe('a command no outcome comes for', () => {
  test('is withdrawn once the wait for confirmation passed: the job shows what the job system reported, and a late ack changes nothing', async () => {
    const { t, c, act, commands, ack, detail, listed } = await withActiveJob({ commandConfirmMs: 60_000 });
    await act('revoke');
    const [command] = await commands();
    const actor = t.engine.connection(c.id)!;
    t.clock.advance(60_000);
    expect(actor.decideCommandExpiry(t.clock.nowMs())).toBeNull(); // not past the wait yet
    t.clock.advance(1);
    const record = actor.decideCommandExpiry(t.clock.nowMs())!;
    expect(record).toEqual({ t: 'commands.expired', connectionId: c.id, atMs: T0 + 60_001, ids: [command!.id] });
    await t.engine.commit(record);
    const expired = await detail();
    expect(expired).toMatchObject({ state: 'active', lastCommand: { status: 'expired', reason: null, completedAt: new Date(T0 + 60_001).toISOString() } });
    expect(states(expired)).toEqual(['queued', 'active', 'active (revoke requested)', 'active (revoke expired unconfirmed)']);
    expect(await listed()).toMatchObject({ state: 'active', lastCommand: { status: 'expired' } });
    expect(await commands()).toEqual([]); // the agent is no longer asked
    expect(await ack([{ id: command!.id, status: 'done' }])).toEqual({ acked: 0 });
    expect((await detail()).lastCommand.status).toBe('expired');
    expect(actor.decideCommandExpiry(t.clock.nowMs())).toBeNull();
  });

  test('the wait defaults to five minutes; commands past it are withdrawn oldest first, at most 1,000 a record', async () => {
    const { t, c, act } = await withActiveJob();
    await act('revoke');
    const actor = t.engine.connection(c.id)!;
    t.clock.advance(5 * 60_000);
    expect(actor.decideCommandExpiry(t.clock.nowMs())).toBeNull();
    t.clock.advance(1);
    expect(actor.decideCommandExpiry(t.clock.nowMs())?.ids).toHaveLength(1);
  });
});

test('replaying the log and restoring a snapshot give the same jobs, commands and outcomes', async () => {
  const log = recordingLog();
  const { t, c, id, act, commands, ack, report, event } = await withActiveJob({ log, commandConfirmMs: 10_000 });
  await report([event(T0 - 10_000, { externalId: 'job-2', state: 'failed' }), event(T0 - 10_000, { externalId: 'job-3', state: 'queued' })]);
  const actor = t.engine.connection(c.id)!;
  const idOf = (externalId: string) => actor.jobs.getByExternalId(externalId)!.id;
  await act('revoke');
  await t.request('POST', '/api/jobs/bulk/retry', { body: { ids: [idOf('job-2')] }, headers: { cookie: await t.login() } });
  await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids: [idOf('job-3')] }, headers: { cookie: await t.login() } });
  const [revoke] = await commands();
  await report([event(T0 - 1, { state: 'completed' })]);
  t.clock.advance(2_000);
  await ack([{ id: revoke!.id, status: 'failed', reason: 'refused' }]);
  t.clock.advance(10_000);
  await t.engine.commit(actor.decideCommandExpiry(t.clock.nowMs())!);
  const shown = (engine: Engine) => [id, idOf('job-2'), idOf('job-3')].map((jobId) => {
    const other = engine.connection(c.id)!;
    return toJobDetail(other.jobs.get(jobId)!, [], other.commandOutcomes.trailOf(jobId), other.supportOf, NO_RELATIONS);
  });
  const expected = shown(t.engine);
  expect(expected.map((job) => [job.state, job.lastCommand?.status])).toEqual([['completed', 'failed'], ['failed', 'expired'], ['queued', 'expired']]);
  for (const engine of replayedAndRestored(t.engine, log.records)) {
    expect(shown(engine)).toEqual(expected);
    expect(engine.connection(c.id)!.commandOutcomes.toSnapshot()).toEqual(actor.commandOutcomes.toSnapshot());
    expect(engine.connection(c.id)!.commands.toSnapshot()).toEqual([]);
  }
});
