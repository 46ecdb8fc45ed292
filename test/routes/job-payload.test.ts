/**
 * What a job was called with and what it gave back: arguments, result, log lines and
 * progress (a number or an object) on ingest; masked by key and capped; read back in the
 * job detail with every attempt; list items without them.
 */
import { describe, expect, test } from 'bun:test';
import { REDACTED } from '../../actors/ingest/redaction.ts';
import { jobEvent } from '../support/events.ts';
import { recordingLog, replayedAndRestored } from '../support/recording-log.ts';
import { testApp, T0 } from '../support/test-app.ts';

async function withConnection(limits: Parameters<typeof testApp>[0] = {}) {
  const t = await testApp(limits);
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  const send = async (events: unknown[]) => {
    const response = await t.ingest(c.apiKey, events);
    expect(response.json).toMatchObject({ rejected: 0 });
    return response;
  };
  const listed = async (query = '') => (await t.request('GET', `/api/jobs?limit=100${query}`, { headers: { cookie } })).json;
  const detail = async (externalId: string) => {
    const job = (await listed()).data.find((item: { externalId: string }) => item.externalId === externalId);
    return (await t.request('GET', `/api/jobs/${job.id}`, { headers: { cookie } })).json;
  };
  return { t, c, send, listed, detail };
}

const at = (c: { id: string }, seconds: number, job: Record<string, unknown>) => jobEvent(c.id, T0 - 60_000 + seconds * 1000, job);

describe('arguments, results, logs and progress of a job', () => {
  test('the detail gives args, result, logs and progress as sent; a list item gives progress only', async () => {
    const { c, send, listed, detail } = await withConnection();
    const args = { args: [42, 'x'], kwargs: { invoice_id: 'INV-7', to: 'ada@example.com', nested: [{ lines: [1, 2] }] } };
    await send([
      at(c, 1, { externalId: 'j1', state: 'active', args, progress: 0.25, logs: ['connecting', 'sending'] }),
      at(c, 2, { externalId: 'j1', state: 'active', progress: { percent: 60, stage: 'upload' }, logs: ['half way: ünïcode ✓'] }),
      at(c, 3, { externalId: 'j1', state: 'completed', result: { sent: true, id: 'msg-1' } }),
    ]);
    const job = await detail('j1');
    expect(job).toMatchObject({ args, result: { sent: true, id: 'msg-1' }, progress: 0.6, progressData: { percent: 60, stage: 'upload' }, truncated: [] });
    expect(job.logs).toEqual(['connecting', 'sending', 'half way: ünïcode ✓']);
    const item = (await listed()).data[0];
    expect(item.progress).toBe(0.6);
    for (const omitted of ['args', 'result', 'logs', 'attempts', 'progressData']) expect(item).not.toHaveProperty(omitted);
  });

  test('a job that sent none has args and result null, no log lines and one attempt', async () => {
    const { c, send, detail } = await withConnection();
    await send([at(c, 1, { externalId: 'plain', state: 'queued' })]);
    expect(await detail('plain')).toMatchObject({ args: null, result: null, logs: [], progressData: null, attempts: [{ attempt: 1, state: 'queued', startedAt: null }] });
  });

  test('values under secret-looking keys are masked at any depth, in args, result and progress objects; other keys are not', async () => {
    const { c, send, detail } = await withConnection();
    await send([
      at(c, 1, {
        externalId: 'secret',
        state: 'completed',
        args: [{ user: { password: 'hunter2', passwordHash: 'x', apiKey: 'k', 'X-Api-Key': 'k', className: 'Invoice' } }, { headers: [{ Authorization: 'Bearer t' }] }, 'password'],
        result: { session: { cookie: 'c', token: { value: 'nested', kept: false } }, card_number: '4242', ssn: '123', user_ssn: '1' },
        progress: { percent: 10, accessToken: 'x' },
      }),
    ]);
    const job = await detail('secret');
    expect(job.args).toEqual([{ user: { password: REDACTED, passwordHash: REDACTED, apiKey: REDACTED, 'X-Api-Key': REDACTED, className: 'Invoice' } }, { headers: [{ Authorization: REDACTED }] }, 'password']);
    expect(job.result).toEqual({ session: { cookie: REDACTED, token: REDACTED }, card_number: REDACTED, ssn: REDACTED, user_ssn: REDACTED });
    expect(job.progressData).toEqual({ percent: 10, accessToken: REDACTED });
  });

  test('the key patterns are configurable: with none, nothing is masked; with others, those', async () => {
    const none = await withConnection({ limits: { payload: { redactKeys: [] } } });
    await none.send([at(none.c, 1, { externalId: 'j', state: 'queued', args: { password: 'shown' } })]);
    expect((await none.detail('j')).args).toEqual({ password: 'shown' });
    const custom = await withConnection({ limits: { payload: { redactKeys: ['iban'] } } });
    await custom.send([at(custom.c, 1, { externalId: 'j', state: 'queued', args: { payerIban: 'DE00', password: 'shown' } })]);
    expect((await custom.detail('j')).args).toEqual({ payerIban: REDACTED, password: 'shown' });
  });

  test('past their caps, args and result are kept cut (their head, and how large the whole was); log lines keep the newest', async () => {
    const { c, send, detail } = await withConnection({ limits: { payload: { argsBytesMax: 40, resultBytesMax: 1000, logBytesMax: 200, logLinesMax: 5 } } });
    const args = { blob: 'é'.repeat(50), userId: 42 };
    await send([at(c, 1, { externalId: 'big', state: 'active', args, result: 'fits', logs: ['l1', 'l2', 'l3'] })]);
    await send([at(c, 2, { externalId: 'big', state: 'active', logs: ['l4', 'l5', 'l6', 'l7'] })]);
    const job = await detail('big');
    const whole = JSON.stringify(args);
    expect(job.truncated).toEqual([{ field: 'args', bytes: Buffer.byteLength(whole) }]);
    expect(typeof job.args).toBe('string');
    expect(Buffer.byteLength(job.args)).toBeLessThanOrEqual(40);
    expect(whole.startsWith(job.args)).toBe(true);
    expect(job.result).toBe('fits');
    // 7 lines past the cap of 5: the oldest go, down to three quarters of the cap
    expect(job.logs).toEqual(['l5', 'l6', 'l7']);
  });

  test('a progress object that says no fraction is kept without a bar; a number afterwards replaces it', async () => {
    const { c, send, detail } = await withConnection();
    await send([at(c, 1, { externalId: 'p', state: 'active', progress: { stage: 'warming up' } })]);
    expect(await detail('p')).toMatchObject({ progress: null, progressData: { stage: 'warming up' } });
    await send([at(c, 2, { externalId: 'p', state: 'active', progress: 0.5 })]);
    expect(await detail('p')).toMatchObject({ progress: 0.5, progressData: null });
    await send([at(c, 3, { externalId: 'p', state: 'active', progress: { done: 3, total: 4 } })]);
    expect(await detail('p')).toMatchObject({ progress: 0.75, progressData: { done: 3, total: 4 } });
  });

  test('a job that failed twice and then succeeded lists three attempts, each with its error and trace; the list shows no error', async () => {
    const { c, send, listed, detail } = await withConnection();
    const iso = (seconds: number) => new Date(T0 - 60_000 + seconds * 1000).toISOString();
    const run = (attempt: number, start: number, outcome: 'retrying' | 'completed', workerId: string) => [
      at(c, start, { externalId: 'flaky', state: 'active', attempt, workerId, startedAt: iso(start) }),
      at(c, start + 1, {
        externalId: 'flaky',
        state: outcome,
        attempt,
        workerId,
        startedAt: iso(start),
        ...(outcome === 'retrying' ? { error: `Timeout ${attempt}`, stacktrace: `Traceback ${attempt}` } : { completedAt: iso(start + 1), result: 'ok' }),
      }),
    ];
    await send([at(c, 0, { externalId: 'flaky', state: 'queued', attempt: 1, args: { userId: 42 } }), ...run(1, 1, 'retrying', 'w1'), ...run(2, 3, 'retrying', 'w2'), ...run(3, 5, 'completed', 'w1')]);
    const job = await detail('flaky');
    expect(job.attempts).toEqual([
      { attempt: 1, state: 'failed', startedAt: iso(1), finishedAt: null, workerId: 'w1', error: 'Timeout 1', stacktrace: 'Traceback 1' },
      { attempt: 2, state: 'failed', startedAt: iso(3), finishedAt: null, workerId: 'w2', error: 'Timeout 2', stacktrace: 'Traceback 2' },
      { attempt: 3, state: 'completed', startedAt: iso(5), finishedAt: iso(6), workerId: 'w1', error: null, stacktrace: null },
    ]);
    expect(job).toMatchObject({ state: 'completed', attempt: 3, error: null, stacktrace: null, durationMs: 1000, args: { userId: 42 }, result: 'ok' });
    expect((await listed()).data[0]).toMatchObject({ externalId: 'flaky', error: null, durationMs: 1000 });
  });

  test("an earlier attempt's error reported after the next attempt began goes to that attempt, not the current run", async () => {
    const { c, send, detail } = await withConnection();
    await send([at(c, 1, { externalId: 'late', state: 'active', attempt: 1 }), at(c, 2, { externalId: 'late', state: 'queued', attempt: 2 })]);
    await send([at(c, 3, { externalId: 'late', state: 'retrying', attempt: 1, error: 'first run failed' })]);
    const job = await detail('late');
    expect(job.error).toBeNull();
    expect(job.attempts.map((run: { attempt: number; state: string; error: string | null }) => [run.attempt, run.state, run.error])).toEqual([
      [1, 'failed', 'first run failed'],
      [2, 'retrying', null],
    ]);
  });

  test('bad payload fields are refused with the field named; too many log lines in one event too', async () => {
    const { t, c } = await withConnection();
    const reply = await t.ingest(c.apiKey, [
      at(c, 1, { externalId: 'a', state: 'queued', logs: 'not an array' }),
      at(c, 1, { externalId: 'b', state: 'queued', logs: [1, 2] }),
      at(c, 1, { externalId: 'c', state: 'queued', progress: 'half' }),
      at(c, 1, { externalId: 'd', state: 'queued', logs: Array.from({ length: 1001 }, () => 'x') }),
    ]);
    expect(reply.json).toMatchObject({ accepted: 0, rejected: 4 });
    expect(reply.json.errors.map((error: { details: Record<string, unknown> }) => Object.keys(error.details)[0])).toEqual(['job.logs', 'job.logs', 'job.progress', 'job.logs']);
  });

  test('what arrived survives a restart: replaying the log and restoring a snapshot give the same job, texts and attempts included', async () => {
    const log = recordingLog();
    const { t, c, send, detail } = await withConnection({ log });
    await send([
      at(c, 1, { externalId: 'r', state: 'active', attempt: 1, args: { password: 'p', id: 1 }, logs: ['a'], progress: { percent: 5 } }),
      at(c, 2, { externalId: 'r', state: 'queued', attempt: 2, error: 'x', result: [1] }),
    ]);
    const before = await detail('r');
    expect(before.args).toEqual({ password: REDACTED, id: 1 });
    expect(before.attempts).toHaveLength(2);
    const live = t.engine.connection(c.id)!.jobs;
    for (const engine of replayedAndRestored(t.engine, log.records)) {
      const jobs = engine.connection(c.id)!.jobs;
      expect(jobs.getByExternalId('r')).toEqual(live.getByExternalId('r'));
      jobs.table.checkInvariants();
    }
  });

  test('GET /api/jobs?args= and ?data.<path>= find jobs by their arguments, combined with other filters, the total counted; bad terms are a 400 naming them', async () => {
    const { t, c, send, listed } = await withConnection();
    await send([
      at(c, 1, { externalId: 'a', state: 'failed', args: { userId: 42, email: 'ada@example.com' } }),
      at(c, 2, { externalId: 'b', state: 'completed', args: { userId: 7, email: 'bob@example.com' } }),
      at(c, 3, { externalId: 'c', state: 'failed', args: { args: [1], kwargs: { invoice_id: 'INV-7' } } }),
      at(c, 4, { externalId: 'd', state: 'failed', args: { userId: '42' } }),
    ]);
    const ids = (page: { data: Array<{ externalId: string }> }) => page.data.map((job) => job.externalId);
    const byData = await listed('&data.userId=42&sortBy=createdAt&sortOrder=asc');
    expect(ids(byData)).toEqual(['a', 'd']);
    expect(byData.pagination).toEqual({ nextCursor: null, limit: 100, total: 2, scan: { partial: false, examined: expect.any(Number), totalExact: true } });
    expect(ids(await listed(`&args=${encodeURIComponent('@example.com')}&state=completed`))).toEqual(['b']);
    expect(ids(await listed('&kwargs.invoice_id=INV-7'))).toEqual(['c']);
    expect(ids(await listed('&data.userId=42&state=completed'))).toEqual([]);
    const cookie = await t.login();
    // a page of one, then its cursor
    const page = async (cursor?: string) =>
      (await t.request('GET', `/api/jobs?args=example.com&limit=1&sortBy=createdAt&sortOrder=desc${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { headers: { cookie } })).json;
    const first = await page();
    const second = await page(first.pagination.nextCursor);
    expect([ids(first), ids(second), second.pagination.nextCursor]).toEqual([['b'], ['a'], null]);
    const refused = await t.request('GET', '/api/jobs?data.a..b=1', { headers: { cookie } });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { 'data.a..b': [expect.stringContaining('path of 1 to 16 keys')] } });
    expect((await t.request('GET', '/api/jobs?args=', { headers: { cookie } })).status).toBe(400);
  });
});
