import type { JobCommand } from '../../actors/connection/command-types.ts';
import { describe, expect, test } from 'bun:test';
import type { RecordLog } from '../../actors/engine.ts';
import { recordingLog, replayedAndRestored } from '../support/recording-log.ts';
import { testApp, T0 } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';


async function withFailedJobs(count: number, log?: RecordLog) {
  const t = await testApp(log === undefined ? {} : { log });
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  await t.ingest(c.apiKey, Array.from({ length: count }, (_, i) => jobEvent(c.id, T0 - 60_000, { externalId: `task-${i}`, state: 'failed' })));
  const actor = t.engine.connection(c.id)!;
  const jobId = (i: number) => actor.jobs.getByExternalId(`task-${i}`)!.id;
  const agent = { authorization: `Bearer ${c.apiKey}` };
  const commands = async () => (await t.request('GET', '/api/agent/commands', { headers: agent })).json.data as Array<{ id: string; jobId: string }>;
  const ack = (body: unknown) => t.request('POST', '/api/agent/commands/ack', { body, headers: agent });
  const detail = async (i: number) => (await t.request('GET', `/api/jobs/${jobId(i)}`, { headers: { cookie } })).json;
  return { t, cookie, c, actor, jobId, commands, ack, detail };
}

describe('agent ack outcomes and the job detail lastCommand', () => {
  test('a job never acted on has lastCommand null; a retry is pending until the agent reports', async () => {
    const { t, cookie, jobId, detail } = await withFailedJobs(2);
    expect((await detail(0)).lastCommand).toBeNull();
    await t.request('POST', `/api/jobs/${jobId(0)}/retry`, { headers: { cookie } });
    const { lastCommand } = await detail(0);
    expect(lastCommand).toEqual({ id: expect.any(String), type: 'retry', status: 'pending', reason: null, details: null, createdAt: new Date(T0).toISOString(), completedAt: null });
    expect((await detail(1)).lastCommand).toBeNull();
  });

  test('a failed outcome is recorded with its reason and time; a done one (ids or outcomes) without a reason', async () => {
    const { t, cookie, jobId, commands, ack, detail } = await withFailedJobs(3);
    await t.request('POST', '/api/jobs/bulk/retry', { body: { ids: [jobId(0), jobId(1), jobId(2)] }, headers: { cookie } });
    const [first, second, third] = await commands();
    t.clock.advance(5_000);
    const reason = 'not retried: the task arguments are not in the result backend';
    const response = await ack({ ids: [first!.id], outcomes: [{ id: second!.id, status: 'failed', reason }, { id: third!.id, status: 'done' }] });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ acked: 3 });
    const completedAt = new Date(T0 + 5_000).toISOString();
    expect((await detail(0)).lastCommand).toMatchObject({ id: first!.id, status: 'done', reason: null, completedAt });
    expect((await detail(1)).lastCommand).toMatchObject({ id: second!.id, type: 'retry', status: 'failed', reason, completedAt });
    expect((await detail(2)).lastCommand).toMatchObject({ id: third!.id, status: 'done', reason: null, completedAt });
    expect(await commands()).toEqual([]);
    // acknowledging again changes nothing: the first outcome stands
    expect((await ack({ outcomes: [{ id: second!.id, status: 'done' }] })).json).toEqual({ acked: 0 });
    expect((await detail(1)).lastCommand.status).toBe('failed');
  });

  test('a retry the agent carried out counts as a run added by hand; a pending, refused or repeated ack adds none, nor does a revoke', async () => {
    const { t, cookie, c, jobId, commands, ack, detail } = await withFailedJobs(3);
    expect((await detail(0)).manualRetries).toBe(0);
    await t.request('POST', '/api/jobs/bulk/retry', { body: { ids: [jobId(0), jobId(1), jobId(2)] }, headers: { cookie } });
    const [first, second] = await commands();
    await ack({ outcomes: [{ id: first!.id, status: 'done' }, { id: second!.id, status: 'failed', reason: 'no arguments' }] });
    await ack({ ids: [first!.id] });
    expect([(await detail(0)).manualRetries, (await detail(1)).manualRetries, (await detail(2)).manualRetries]).toEqual([1, 0, 0]);
    // the job system runs it, it fails again, and a second retry is carried out
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 1_000, { externalId: 'task-0', state: 'failed', attempt: 2 })]);
    await t.request('POST', `/api/jobs/${jobId(0)}/retry`, { headers: { cookie } });
    const retryAgain = (await commands()).find((command) => command.jobId === jobId(0))!;
    await ack({ ids: [retryAgain.id] });
    expect(await detail(0)).toMatchObject({ attempt: 2, manualRetries: 2 });
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 2_000, { externalId: 'task-1', state: 'queued' })]);
    await t.request('POST', `/api/jobs/${jobId(1)}/revoke`, { headers: { cookie } });
    await ack({ ids: (await commands()).map((command) => command.id) });
    expect((await detail(1)).manualRetries).toBe(0);
  });

  test('an id listed twice counts once, as first listed', async () => {
    const { t, cookie, jobId, commands, ack, detail } = await withFailedJobs(1);
    await t.request('POST', `/api/jobs/${jobId(0)}/retry`, { headers: { cookie } });
    const [command] = await commands();
    const response = await ack({ outcomes: [{ id: command!.id, status: 'failed', reason: 'first' }, { id: command!.id, status: 'done' }] });
    expect(response.json).toEqual({ acked: 1 });
    expect((await detail(0)).lastCommand).toMatchObject({ status: 'failed', reason: 'first' });
  });

  test('the latest command is what the job shows; an older command\'s outcome does not overwrite it', async () => {
    const { t, cookie, c, jobId, commands, ack, detail } = await withFailedJobs(0);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 - 60_000, { externalId: 'task-0', state: 'queued' })]);
    await t.request('POST', `/api/jobs/${jobId(0)}/revoke`, { headers: { cookie } });
    t.clock.advance(1_000);
    await t.request('POST', `/api/jobs/${jobId(0)}/retry`, { headers: { cookie } });
    const [revoke, retry] = await commands();
    await ack({ outcomes: [{ id: revoke!.id, status: 'failed', reason: 'too late' }] });
    expect((await detail(0)).lastCommand).toMatchObject({ id: retry!.id, type: 'retry', status: 'pending', reason: null });
  });

  test('ack validation: at least one command, at most 1,000 over ids and outcomes, known statuses, reasons up to 1,000 chars', async () => {
    const { ack } = await withFailedJobs(0);
    const ids = (count: number, prefix = 'c') => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    const outcomes = (count: number) => ids(count, 'o').map((id) => ({ id, status: 'done' }));
    const cases: Array<[unknown, string]> = [
      [{}, 'ids'],
      [{ outcomes: [] }, 'outcomes'],
      [{ outcomes: outcomes(1001) }, 'outcomes'],
      [{ ids: ids(600), outcomes: outcomes(401) }, 'ids'],
      [{ outcomes: [{ id: 'x', status: 'maybe' }] }, 'outcomes.0.status'],
      [{ outcomes: [{ id: 'x', status: 'failed', reason: 'r'.repeat(1001) }] }, 'outcomes.0.reason'],
    ];
    for (const [body, field] of cases) {
      const response = await ack(body);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(response.json.error.details)).toEqual([field]);
    }
    expect((await ack({ ids: ids(500), outcomes: [...outcomes(499), { id: 'x', status: 'failed', reason: 'r'.repeat(1000) }] })).json).toEqual({ acked: 0 });
  });

  test('outcomes survive a restart: replaying the log and restoring a snapshot give the same lastCommand', async () => {
    const log = recordingLog();
    const { t, cookie, jobId, commands, ack, detail, c } = await withFailedJobs(2, log);
    await t.request('POST', '/api/jobs/bulk/retry', { body: { ids: [jobId(0), jobId(1)] }, headers: { cookie } });
    const [first] = await commands();
    t.clock.advance(2_000);
    await ack({ outcomes: [{ id: first!.id, status: 'failed', reason: 'no arguments' }] });
    const expected = [(await detail(0)).lastCommand, (await detail(1)).lastCommand];
    expect(expected.map((command) => command.status)).toEqual(['failed', 'pending']);

    for (const engine of replayedAndRestored(t.engine, log.records)) {
      const actor = engine.connection(c.id)!;
      expect(actor.commandOutcomes.toSnapshot()).toEqual(t.engine.connection(c.id)!.commandOutcomes.toSnapshot());
      expect(actor.commandOutcomes.ofJob(jobId(0))).toMatchObject({ status: 'failed', reason: 'no arguments', completedAtMs: T0 + 2_000 });
      expect(actor.commands.oldestFirst(10).map((command) => (command as JobCommand).jobId)).toEqual([jobId(1)]);
    }
  });

  test('outcomes expire with retention, like commands', async () => {
    const { t, cookie, jobId, c, detail } = await withFailedJobs(1);
    await t.request('POST', `/api/jobs/${jobId(0)}/retry`, { headers: { cookie } });
    // a newer event keeps the job itself alive past the command's retention (the clock moves
    // with it: events further ahead of the server clock than the skew tolerance are refused)
    t.clock.set(T0 + 86_400_000);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 86_400_000, { externalId: 'task-0', state: 'failed' })]);
    await t.engine.commit({ t: 'retention', atMs: T0 + 86_400_000 + 1 });
    expect((await detail(0)).lastCommand).toBeNull();
  });

  test('GET /api/agent/connection tells the key\'s connection', async () => {
    const { t, c } = await withFailedJobs(0);
    const response = await t.request('GET', '/api/agent/connection', { headers: { authorization: `Bearer ${c.apiKey}` } });
    expect(response.json).toEqual({ connectionId: c.id });
    expect((await t.request('GET', '/api/agent/connection', { headers: { authorization: 'Bearer sk_nope' } })).status).toBe(401);
  });
});
