/**
 * The commands on one job beyond revoke and retry (run now, delete, kill) and a retry of a
 * job waiting to retry: answered 202 with the command (or the contract's answer for retry),
 * queued for the agent with the job's names, never changing the job's state themselves; the
 * agent's outcome (done, failed, unsupported) or the expiry is shown on the job and its
 * history, and what the detail offers follows the agent's report of what it supports.
 */
import { describe, expect, test } from 'bun:test';
import { T0 } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';
import { BULLMQ_CONTROLS, controlFixture } from './control-fixture.ts';

const notes = (detail: { stateHistory: Array<{ state: string; note?: string }> }) => detail.stateHistory.flatMap((entry) => (entry.note === undefined ? [] : [`${entry.state}: ${entry.note}`]));

describe('run now, delete and kill', () => {
  test('run now: 202 with the pending command; the agent gets the job by its names; the state stays the job system\'s', async () => {
    const f = await controlFixture();
    const id = f.jobId('emails:1');
    const accepted = await f.post(`/api/jobs/${id}/promote`);
    expect(accepted.status).toBe(202);
    expect(accepted.json).toEqual({ commandId: expect.any(String) });
    expect((await f.get(`/api/commands/${accepted.json.commandId}`)).json).toEqual({
      id: accepted.json.commandId,
      connectionId: f.c.id,
      type: 'promote',
      target: { kind: 'job', jobId: id },
      params: null,
      status: 'pending',
      reason: null,
      details: null,
      createdAt: new Date(T0).toISOString(),
      completedAt: null,
    });
    expect(await f.commands()).toEqual([{ id: accepted.json.commandId, type: 'promote', jobId: id, externalId: 'emails:1', name: 'send', queue: 'emails', createdAt: new Date(T0).toISOString() }]);
    const detail = (await f.get(`/api/jobs/${id}`)).json;
    expect(detail).toMatchObject({ state: 'scheduled', lastCommand: { type: 'promote', status: 'pending' } });
    expect(notes(detail)).toEqual(['scheduled: run now requested']);
  });

  test('each answers 409 INVALID_STATE outside its states and 404 for an unknown job; nothing is queued', async () => {
    const f = await controlFixture();
    for (const [type, externalId, state] of [['promote', 'emails:4', 'queued'], ['kill', 'emails:3', 'failed'], ['delete', 'emails:5', 'active']] as const) {
      const refused = await f.post(`/api/jobs/${f.jobId(externalId)}/${type}`);
      expect({ type, status: refused.status, code: refused.json.error.code }).toEqual({ type, status: 409, code: 'INVALID_STATE' });
      expect(refused.json.error.message).toContain(`from state '${state}'`);
    }
    expect((await f.post('/api/jobs/nope/delete')).status).toBe(404);
    expect(await f.commands()).toEqual([]);
  });

  test('done: the history says it was requested and done; a job system event then moves the job', async () => {
    const f = await controlFixture();
    const id = f.jobId('emails:3');
    const { json } = await f.post(`/api/jobs/${id}/delete`);
    f.t.clock.advance(1_000);
    expect((await f.ack([{ id: json.commandId, status: 'done' }])).json).toEqual({ acked: 1 });
    const detail = (await f.get(`/api/jobs/${id}`)).json;
    expect(detail).toMatchObject({ state: 'failed', lastCommand: { type: 'delete', status: 'done', completedAt: new Date(T0 + 1_000).toISOString() } });
    expect(notes(detail)).toEqual(['failed: delete requested', 'failed: delete done']);
    expect((await f.get(`/api/commands/${json.commandId}`)).json).toMatchObject({ status: 'done', target: { kind: 'job', jobId: id } });
  });

  test('unsupported and failed outcomes are kept with their reasons; a kill answered "not found" changes nothing of the job', async () => {
    const f = await controlFixture();
    const kill = await f.post(`/api/jobs/${f.jobId('emails:2')}/kill`);
    const promote = await f.post(`/api/jobs/${f.jobId('emails:1')}/promote`);
    await f.ack([
      { id: kill.json.commandId, status: 'failed', reason: 'not found: BullMQ no longer has job emails:2' },
      { id: promote.json.commandId, status: 'unsupported', reason: 'ETA tasks live in their workers' },
    ]);
    const killed = (await f.get(`/api/jobs/${f.jobId('emails:2')}`)).json;
    expect(killed).toMatchObject({ state: 'retrying', error: 'smtp down', lastCommand: { status: 'failed', reason: 'not found: BullMQ no longer has job emails:2' } });
    expect(notes(killed)).toEqual(['retrying: kill requested', 'retrying: kill refused: not found: BullMQ no longer has job emails:2']);
    const promoted = (await f.get(`/api/jobs/${f.jobId('emails:1')}`)).json;
    expect(promoted.lastCommand).toMatchObject({ status: 'unsupported', reason: 'ETA tasks live in their workers' });
    expect(notes(promoted)).toContain('scheduled: run now unsupported: ETA tasks live in their workers');
  });

  test('no outcome within the wait: expired, and no longer handed to the agent', async () => {
    const f = await controlFixture({ commandConfirmMs: 60_000 });
    const { json } = await f.post(`/api/jobs/${f.jobId('emails:1')}/promote`);
    f.t.clock.advance(61_000);
    const actor = f.t.engine.connection(f.c.id)!;
    await f.t.engine.commit(actor.decideCommandExpiry(f.t.clock.nowMs())!);
    expect(await f.commands()).toEqual([]);
    expect((await f.get(`/api/commands/${json.commandId}`)).json).toMatchObject({ status: 'expired', completedAt: new Date(T0 + 61_000).toISOString() });
  });
});

describe('retry of a job waiting to retry ("retry now")', () => {
  test("answers the contract's retrying; the job keeps the job system's state, with the request and the refusal as notes", async () => {
    const f = await controlFixture();
    const id = f.jobId('emails:2');
    const answer = await f.post(`/api/jobs/${id}/retry`);
    expect(answer).toEqual({ status: 200, json: { id, success: true, state: 'retrying' } });
    const [command] = await f.commands();
    expect(command).toMatchObject({ type: 'retry', externalId: 'emails:2' });
    await f.ack([{ id: command.id, status: 'failed', reason: 'the job is no longer delayed in BullMQ' }]);
    const detail = (await f.get(`/api/jobs/${id}`)).json;
    // the job system's own retrying entry stands: a refused retry now withdraws nothing
    expect(detail.stateHistory.filter((entry: { note?: string }) => entry.note === undefined).map((entry: { state: string }) => entry.state)).toEqual(['retrying']);
    expect(detail.state).toBe('retrying');
    expect(notes(detail)).toEqual(['retrying: retry requested', 'retrying: retry refused: the job is no longer delayed in BullMQ']);
  });

  test("with the job system's clock ahead, a refused retry now leaves the job system's own retrying entry where it stands", async () => {
    const f = await controlFixture();
    // the agent's clock runs 3 s ahead: the job's retrying entry stands after the service's now, where the command's would go
    await f.ingest([jobEvent(f.c.id, T0 + 3_000, { externalId: 'emails:9', name: 'send', queue: 'emails', state: 'active' }, { framework: 'bullmq' })]);
    await f.ingest([jobEvent(f.c.id, T0 + 3_000, { externalId: 'emails:9', name: 'send', queue: 'emails', state: 'retrying', attempt: 1, error: 'smtp down' }, { framework: 'bullmq' })]);
    const id = f.jobId('emails:9');
    expect((await f.post(`/api/jobs/${id}/retry`)).json.state).toBe('retrying');
    const [command] = await f.commands();
    await f.ack([{ id: command.id, status: 'failed', reason: 'not delayed any more' }]);
    const detail = (await f.get(`/api/jobs/${id}`)).json;
    expect(detail.state).toBe('retrying');
    expect(detail.stateHistory.filter((entry: { note?: string }) => entry.note === undefined).map((entry: { state: string }) => entry.state)).toEqual(['active', 'retrying']);
  });

  test('the job system running it moves it on as usual', async () => {
    const f = await controlFixture();
    const id = f.jobId('emails:2');
    await f.post(`/api/jobs/${id}/retry`);
    const [command] = await f.commands();
    await f.ack([{ id: command.id, status: 'done' }]);
    await f.ingest([jobEvent(f.c.id, T0 + 500, { externalId: 'emails:2', name: 'send', queue: 'emails', state: 'active', attempt: 3 }, { framework: 'bullmq' })]);
    expect((await f.get(`/api/jobs/${id}`)).json).toMatchObject({ state: 'active', lastCommand: { type: 'retry', status: 'done' } });
  });
});

describe("what the detail offers follows the agent's report", () => {
  test('without a report, only revoke and retry are offered (an agent from before the controls); with one, each command as it says', async () => {
    const f = await controlFixture();
    const before = (await f.get(`/api/jobs/${f.jobId('emails:1')}`)).json.actions;
    expect(before.promote).toEqual({ available: false, reason: expect.stringContaining('has not said it can run now') });
    expect(before.delete.available).toBe(false);
    expect((await f.report(BULLMQ_CONTROLS)).status).toBe(200);
    const after = (await f.get(`/api/jobs/${f.jobId('emails:1')}`)).json.actions;
    expect(after).toMatchObject({ promote: { available: true }, delete: { available: true }, kill: { available: false }, revoke: { available: false } });
    await f.report({ ...BULLMQ_CONTROLS, promote: { supported: false, reason: 'not in this version' } });
    expect((await f.get(`/api/jobs/${f.jobId('emails:1')}`)).json.actions.promote).toEqual({ available: false, reason: 'not in this version' });
  });

  test('a pending command makes the others wait; retry now is offered for a job waiting to retry, not for Celery', async () => {
    const f = await controlFixture();
    await f.report(BULLMQ_CONTROLS);
    expect((await f.get(`/api/jobs/${f.jobId('emails:2')}`)).json.actions).toMatchObject({ retry: { available: true }, kill: { available: true }, delete: { available: true } });
    await f.post(`/api/jobs/${f.jobId('emails:2')}/kill`);
    expect((await f.get(`/api/jobs/${f.jobId('emails:2')}`)).json.actions.retry).toEqual({ available: false, reason: 'a kill is waiting for the agent' });
    const celery = await controlFixture({ framework: 'celery' });
    expect((await celery.get(`/api/jobs/${celery.jobId('emails:2')}`)).json.actions.retry).toEqual({ available: false, reason: expect.stringContaining('held by its worker') });
  });
});
