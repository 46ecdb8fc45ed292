/**
 * The alert routes: validation per kind, limits, edits, the overview, and tenant
 * isolation (another user's rules and channels are invisible and untouchable). Every
 * answer is checked against the OpenAPI document by the test app.
 */
import { describe, expect, test } from 'bun:test';
import { ALERT_LIMITS } from '../../actors/alerts/alert-model.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { alertFixture } from '../alerts/alert-fixture.ts';

describe('alert routes', () => {
  test('a channel is created with its secret shown once; listing never shows it', async () => {
    const f = await alertFixture();
    const created = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: f.connection.id, name: 'ops', url: 'https://hooks.example.com/x', format: 'slack' }, headers: { cookie: f.cookie } });
    expect(created.status).toBe(201);
    expect(created.json.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.json.channel).toMatchObject({ name: 'ops', format: 'slack', pending: 0, deliveries: [], connectionId: f.connection.id });
    const listed = await f.t.request('GET', '/api/alert-channels', { headers: { cookie: f.cookie } });
    expect(listed.json.data).toHaveLength(1);
    expect(listed.text).not.toContain(created.json.secret);
  });

  test('rule fields are checked per kind, each field named', async () => {
    const f = await alertFixture();
    const create = (body: Record<string, unknown>) => f.t.request('POST', '/api/alert-rules', { body: { connectionId: f.connection.id, name: 'r', channelIds: [], windowSeconds: 300, ...body }, headers: { cookie: f.cookie } });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ kind: 'failure_rate' }, 'threshold', 'needs a threshold'],
      [{ kind: 'failure_rate', threshold: 1 }, 'threshold', 'fraction'],
      [{ kind: 'failure_rate', threshold: 0.1, task: 'x' }, 'task', 'does not take a task'],
      [{ kind: 'queue_depth', threshold: 1.5 }, 'threshold', 'whole number'],
      [{ kind: 'worker_offline', threshold: 3 }, 'threshold', 'has no threshold'],
      [{ kind: 'task_missing' }, 'task', 'names the task'],
      [{ kind: 'task_missing', task: 't', queue: 'q' }, 'queue', 'does not take a queue'],
      [{ kind: 'job_stuck', windowSeconds: 5 }, 'windowSeconds', ''],
      [{ kind: 'job_stuck', windowSeconds: ALERT_LIMITS.windowSecondsMax + 1 }, 'windowSeconds', ''],
      [{ kind: 'job_stuck', channelIds: ['nope'] }, 'channelIds', 'no channel nope'],
      [{ kind: 'nonsense' }, 'kind', ''],
      [{ kind: 'job_stuck', name: '  ' }, 'name', ''],
    ];
    for (const [body, field, message] of cases) {
      const answer = await create(body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(answer.json.error.details[field]?.join(' ') ?? '').toContain(message);
    }
    expect(f.book().rules.size).toBe(0);
  });

  test('a rule is created, edited (null clears a field) and deleted; it reports its state and the value now', async () => {
    const f = await alertFixture();
    const { channel } = await f.createChannel();
    const rule = await f.createRule({ kind: 'job_stuck', task: 'tasks.import', windowSeconds: 600, channelIds: [channel.id] });
    const listed = await f.t.request('GET', '/api/alert-rules', { headers: { cookie: f.cookie } });
    expect(listed.json.data[0]).toMatchObject({ id: rule.id, status: 'ok', firingSince: null, current: { value: null, breached: false, text: 'no data' }, condition: 'a job active > 10 min, task tasks.import', channelIds: [channel.id] });

    const edited = await f.t.request('PATCH', `/api/alert-rules/${rule.id}`, { body: { task: null, windowSeconds: 60 }, headers: { cookie: f.cookie } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({ task: null, windowSeconds: 60, kind: 'job_stuck' });
    const badEdit = await f.t.request('PATCH', `/api/alert-rules/${rule.id}`, { body: { kind: 'task_missing' }, headers: { cookie: f.cookie } });
    expect(badEdit.status).toBe(400);
    expect(badEdit.json.error.details.task).toBeDefined();
    expect((await f.t.request('PATCH', `/api/alert-rules/${rule.id}`, { body: {}, headers: { cookie: f.cookie } })).status).toBe(400);

    // deleting the channel removes it from the rule
    expect((await f.t.request('DELETE', `/api/alert-channels/${channel.id}`, { headers: { cookie: f.cookie } })).status).toBe(204);
    expect((await f.t.request('GET', '/api/alert-rules', { headers: { cookie: f.cookie } })).json.data[0].channelIds).toEqual([]);
    expect((await f.t.request('DELETE', `/api/alert-rules/${rule.id}`, { headers: { cookie: f.cookie } })).status).toBe(204);
    expect((await f.t.request('DELETE', `/api/alert-rules/${rule.id}`, { headers: { cookie: f.cookie } })).status).toBe(404);
  });

  test('the preview measures a rule before it is saved', async () => {
    const f = await alertFixture();
    await f.ingest(Array.from({ length: 6 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `j-${i}`, state: i < 3 ? 'failed' : 'completed' })));
    const preview = await f.t.request('POST', '/api/alert-rules/preview', { body: { connectionId: f.connection.id, kind: 'failure_rate', threshold: 0.4, windowSeconds: 300 }, headers: { cookie: f.cookie } });
    expect(preview.status).toBe(200);
    expect(preview.json).toEqual({ value: 0.5, breached: true, text: '50%' });
    expect(f.book().rules.size).toBe(0);
  });

  test('GET /api/alerts lists what fires now and the recent transitions, newest first', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'failure_rate', name: 'emails failing', threshold: 0.2, windowSeconds: 300 });
    await f.ingest(Array.from({ length: 5 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `j-${i}`, state: 'failed' })));
    await f.evaluate();
    const overview = await f.t.request('GET', '/api/alerts', { headers: { cookie: f.cookie } });
    expect(overview.json).toEqual({
      firing: [{ ruleId: rule.id, ruleName: 'emails failing', connectionId: f.connection.id, kind: 'failure_rate', status: 'firing', value: 1, at: new Date(T0).toISOString() }],
      recent: [{ ruleId: rule.id, ruleName: 'emails failing', connectionId: f.connection.id, kind: 'failure_rate', status: 'firing', value: 1, at: new Date(T0).toISOString() }],
    });
  });

  test('limits: rules and channels per connection', async () => {
    const f = await alertFixture();
    for (let i = 0; i < ALERT_LIMITS.channelsPerConnectionMax; i++) await f.createChannel({ name: `c${i}` });
    const extraChannel = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: f.connection.id, name: 'one more', url: 'https://hooks.example.com/', format: 'json' }, headers: { cookie: f.cookie } });
    expect(extraChannel.status).toBe(409);
    expect(extraChannel.json.error.message).toContain(`at most ${ALERT_LIMITS.channelsPerConnectionMax} alert channels`);
    for (let i = 0; i < ALERT_LIMITS.rulesPerConnectionMax; i++) f.t.engine.evolve(f.book().decideSaveRule(f.connection.id, null, { name: `r${i}`, kind: 'job_stuck', queue: null, task: null, threshold: null, windowSeconds: 60, channelIds: [], includePaused: false }, T0));
    const extraRule = await f.t.request('POST', '/api/alert-rules', { body: { connectionId: f.connection.id, name: 'one more', kind: 'job_stuck', windowSeconds: 60, channelIds: [] }, headers: { cookie: f.cookie } });
    expect(extraRule.status).toBe(409);
    const longName = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: f.connection.id, name: 'x'.repeat(ALERT_LIMITS.nameLengthMax + 1), url: 'https://hooks.example.com/', format: 'json' }, headers: { cookie: f.cookie } });
    expect(longName.status).toBe(400);
  });

  test("tenant isolation: another user's rules and channels are invisible and untouchable, and their connection is not found", async () => {
    const f = await alertFixture();
    const { channel } = await f.createChannel();
    const rule = await f.createRule({ kind: 'job_stuck', windowSeconds: 60, channelIds: [channel.id] });
    const other = await f.t.createUser(f.cookie, 'other@example.com');
    const as = { headers: { cookie: other } };
    expect((await f.t.request('GET', '/api/alert-channels', as)).json.data).toEqual([]);
    expect((await f.t.request('GET', `/api/alert-rules?connectionId=${f.connection.id}`, as)).json.data).toEqual([]);
    expect((await f.t.request('GET', '/api/alerts', as)).json).toEqual({ firing: [], recent: [] });
    expect((await f.t.request('PATCH', `/api/alert-rules/${rule.id}`, { body: { name: 'mine now' }, ...as })).status).toBe(404);
    expect((await f.t.request('DELETE', `/api/alert-rules/${rule.id}`, as)).status).toBe(404);
    expect((await f.t.request('DELETE', `/api/alert-channels/${channel.id}`, as)).status).toBe(404);
    expect((await f.t.request('POST', `/api/alert-channels/${channel.id}/test`, { ...as, headers: { ...as.headers, 'content-type': 'application/json' }, rawBody: '{}' })).status).toBe(404);
    const intoTheirs = await f.t.request('POST', '/api/alert-rules', { body: { connectionId: f.connection.id, name: 'x', kind: 'job_stuck', windowSeconds: 60, channelIds: [] }, ...as });
    expect(intoTheirs.status).toBe(404);
    const channelIntoTheirs = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: f.connection.id, name: 'x', url: 'https://hooks.example.com/', format: 'json' }, ...as });
    expect(channelIntoTheirs.status).toBe(404);
    const preview = await f.t.request('POST', '/api/alert-rules/preview', { body: { connectionId: f.connection.id, kind: 'job_stuck', windowSeconds: 60 }, ...as });
    expect(preview.status).toBe(404);
    // the other user's own connection cannot name the first user's channel
    const theirs = await f.t.createConnection(other, 'theirs');
    const crossChannel = await f.t.request('POST', '/api/alert-rules', { body: { connectionId: theirs.id, name: 'x', kind: 'job_stuck', windowSeconds: 60, channelIds: [channel.id] }, ...as });
    expect(crossChannel.status).toBe(400);
    expect(f.book().rules.get(rule.id)!.name).toBe('rule job_stuck');
    expect(f.book().channels.has(channel.id)).toBe(true);
  });

  test('without a session every alert route is 401', async () => {
    const f = await alertFixture();
    for (const [method, path] of [['GET', '/api/alert-channels'], ['GET', '/api/alert-rules'], ['GET', '/api/alerts'], ['DELETE', '/api/alert-rules/x']] as const) {
      expect((await f.t.request(method, path)).status).toBe(401);
    }
  });
});
