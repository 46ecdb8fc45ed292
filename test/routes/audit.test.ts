/**
 * The audit log through the routes: what a person's changes and sign-ins leave in it (who,
 * when, from where, what, on what, the outcome), who may read which entries, filters and
 * cursor pages, and what is not in it (an agent's ingest, reads, anonymous probes). The
 * entries are records: a replay of the log brings back the same ones.
 */
import { describe, expect, test } from 'bun:test';
import { Engine, inMemoryLog, type EngineRecord } from '../../actors/engine.ts';
import { ManualClock } from '../../actors/clock.ts';
import { jobEvent } from '../support/events.ts';
import { ADMIN, T0, testApp, type TestApp } from '../support/test-app.ts';

async function withTeams() {
  const records: EngineRecord[] = [];
  const t = await testApp({ log: { append: (record) => (records.push(structuredClone(record as EngineRecord)), inMemoryLog.append(record)) } });
  const admin = await t.sessionCookieOf(t.engine.accounts.userByEmail(ADMIN.email)!);
  const lead = await t.userWithSession('lead@example.com');
  const viewer = await t.userWithSession('viewer@example.com');
  const other = await t.userWithSession('other@example.com');
  const team = async (name: string) => (await t.request('POST', '/api/teams', { body: { name }, headers: { cookie: admin } })).json.team.id as string;
  const production = await team('production');
  const staging = await team('staging');
  await t.request('POST', `/api/teams/${production}/members`, { body: { email: 'lead@example.com', role: 'admin' }, headers: { cookie: admin } });
  await t.request('POST', `/api/teams/${production}/members`, { body: { email: 'viewer@example.com', role: 'viewer' }, headers: { cookie: admin } });
  await t.request('POST', `/api/teams/${staging}/members`, { body: { email: 'other@example.com', role: 'admin' }, headers: { cookie: admin } });
  const created = await t.request('POST', '/api/connections', { body: { name: 'prod', teamId: production }, headers: { cookie: lead.cookie } });
  return { t, records, admin, lead, viewer, other, production, staging, connection: { id: created.json.connection.id as string, apiKey: created.json.apiKey as string } };
}

const read = async (t: TestApp, cookie: string, query = '') => (await t.request('GET', `/api/audit${query}`, { headers: { cookie } })).json;

describe('GET /api/audit', () => {
  test("a team's changes, allowed and refused, are read by that team's admins; the instance admin reads everything; a viewer is refused", async () => {
    const { t, admin, lead, viewer, other, production, connection } = await withTeams();
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'j1' })]);
    const jobId = t.engine.connection(connection.id)!.jobs.getByExternalId('j1')!.id;
    expect((await t.request('POST', `/api/jobs/${jobId}/revoke`, { headers: { cookie: viewer.cookie } })).status).toBe(403);
    expect((await t.request('POST', `/api/jobs/${jobId}/revoke`, { headers: { cookie: lead.cookie } })).status).toBe(200);

    const forLead = await read(t, lead.cookie);
    expect(forLead.data.map((entry: any) => [entry.action, entry.email, entry.outcome, entry.status])).toEqual([
      ['job.revoke', 'lead@example.com', 'success', 200],
      ['job.revoke', 'viewer@example.com', 'denied', 403],
      ['connection.create', 'lead@example.com', 'success', 201],
      ['member.add', ADMIN.email, 'success', 201],
      ['member.add', ADMIN.email, 'success', 201],
      ['team.create', ADMIN.email, 'success', 201],
    ]);
    expect(forLead.data[0]).toMatchObject({ userId: lead.user.id, target: jobId, teamId: production, connectionId: connection.id, error: null, at: new Date(T0).toISOString() });
    expect(forLead.data[3]).toMatchObject({ target: 'viewer@example.com', teamId: production });
    expect((await read(t, other.cookie)).data.map((entry: any) => entry.action)).toEqual(['member.add', 'team.create']); // their own team's only
    expect((await t.request('GET', '/api/audit', { headers: { cookie: viewer.cookie } })).status).toBe(403);
    const everything = await read(t, admin);
    expect(everything.data.map((entry: any) => entry.action)).toEqual(['job.revoke', 'job.revoke', 'connection.create', 'member.add', 'member.add', 'member.add', 'team.create', 'team.create']);
  });

  test('sign-ins, failed ones too, and sign-outs are in it with the address and the email named; throttled and malformed attempts, an anonymous probe, ingest and reads are not', async () => {
    const { t, admin, connection } = await withTeams();
    const served = t.serve();
    try {
      const login = (password: string) => fetch(`${served.baseUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN.email, password }) });
      expect((await login('not the password')).status).toBe(401);
      const good = await login(ADMIN.password);
      expect(good.status).toBe(200);
      const cookie = good.headers.getSetCookie().find((each) => each.startsWith('session='))!.split(';')[0]!;
      expect((await fetch(`${served.baseUrl}/api/auth/logout`, { method: 'POST', headers: { cookie } })).status).toBe(204);
    } finally {
      await served.stop();
    }
    const before = t.engine.audit.size;
    expect((await t.request('POST', '/api/auth/login', { body: { email: 'x' } })).status).toBe(400);
    expect((await t.request('POST', '/api/jobs/x/revoke')).status).toBe(401);
    expect((await t.request('POST', '/api/auth/logout')).status).toBe(204);
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)]);
    await t.request('GET', '/api/jobs', { headers: { cookie: admin } });
    expect(t.engine.audit.size).toBe(before);

    const entries = (await read(t, admin, '?limit=3')).data;
    expect(entries.map((entry: any) => [entry.action, entry.email, entry.outcome, entry.address, entry.userId === null])).toEqual([
      ['auth.logout', ADMIN.email, 'success', '127.0.0.1', false],
      ['auth.login', ADMIN.email, 'success', '127.0.0.1', false],
      ['auth.login', ADMIN.email, 'denied', '127.0.0.1', true],
    ]);
    expect(entries[2].error).toBe('UNAUTHORIZED: invalid email or password');
  }, 30_000);

  test('filters by team, user, action and outcome, and pages with a cursor; a bad cursor is a 400 naming it', async () => {
    const { t, admin, lead, production } = await withTeams();
    const page1 = await read(t, admin, `?teamId=${production}&limit=2`);
    expect(page1.data).toHaveLength(2);
    const page2 = await read(t, admin, `?teamId=${production}&limit=2&cursor=${page1.pagination.nextCursor}`);
    expect(page2.data.map((entry: any) => entry.action)).toEqual(['member.add', 'team.create']);
    expect(page2.pagination).toEqual({ nextCursor: null, limit: 2 });
    expect((await read(t, admin, `?userId=${lead.user.id}`)).data.map((entry: any) => entry.action)).toEqual(['connection.create']);
    expect((await read(t, admin, '?action=team.create')).data).toHaveLength(2);
    expect((await read(t, admin, '?outcome=denied')).data).toEqual([]);
    const bad = await t.request('GET', '/api/audit?cursor=nope', { headers: { cookie: admin } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details).toEqual({ cursor: ['is not a cursor of this list'] });
  });

  test('the entries are records: a replay of the log brings back the same log', async () => {
    const { t, records } = await withTeams();
    const replayed = new Engine({ clock: new ManualClock(t.clock.nowMs()), log: inMemoryLog, limits: t.engine.limits });
    for (const record of records) replayed.evolve(structuredClone(record));
    expect(replayed.audit.toSnapshot()).toEqual(t.engine.audit.toSnapshot());
    expect(replayed.audit.size).toBeGreaterThan(5);
  });
});
