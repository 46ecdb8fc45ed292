/**
 * Saved views of the jobs list: a team's operators and admins save, change and delete
 * them, its viewers read them, nobody else sees them; their filters are the jobs list's
 * own, checked as GET /api/jobs checks them, so a saved view always opens.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { VIEWS_PER_TEAM_MAX } from '../../actors/accounts/saved-views.ts';
import { withOwnTeam } from '../support/team-access.ts';
import { ADMIN, testApp, type TestApp } from '../support/test-app.ts';

let t: TestApp;
const cookies: Record<string, string> = {};
let teamId: string;
let connectionId: string;

beforeAll(async () => {
  t = await testApp();
  const instanceAdmin = t.engine.accounts.userByEmail(ADMIN.email)!;
  for (const persona of ['viewer', 'operator', 'outsider']) cookies[persona] = (await t.userWithSession(`${persona}@example.com`)).cookie;
  await withOwnTeam(t.engine, t.engine.accounts.userByEmail('outsider@example.com')!, 'elsewhere');
  const asAdmin = await withOwnTeam(t.engine, instanceAdmin);
  const team = await t.teams.create(asAdmin, 'payments');
  teamId = team.id;
  await t.teams.addMember(asAdmin, teamId, 'viewer@example.com', 'viewer');
  await t.teams.addMember(asAdmin, teamId, 'operator@example.com', 'operator');
  await t.teams.addMember(asAdmin, teamId, ADMIN.email, 'admin');
  connectionId = (await t.connections.create(asAdmin, 'prod', teamId)).connection.id;
});

const as = (persona: string, method: string, path: string, body?: unknown) => t.request(method, path, { body, headers: { cookie: cookies[persona]! } });

describe('saved views', () => {
  test("an operator saves a view for the team; its viewers list it, with the link's parameters; an outsider sees none", async () => {
    const params = { state: 'failed', queue: 'emails', sortBy: 'startedAt', sortOrder: 'asc', connectionId, 'data.invoice_id': 'INV-7' };
    const saved = await as('operator', 'POST', '/api/views', { teamId, name: '  Failed emails ', params });
    expect(saved.status).toBe(201);
    expect(saved.json.view).toMatchObject({ teamId, name: 'Failed emails', params, createdBy: 'operator@example.com' });
    const listed = await as('viewer', 'GET', '/api/views');
    expect(listed.json.data.map((view: { name: string }) => view.name)).toContain('Failed emails');
    expect((await as('viewer', 'GET', `/api/views?teamId=${teamId}`)).json.data).toHaveLength(listed.json.data.length);
    expect((await as('outsider', 'GET', '/api/views')).json.data).toEqual([]);
    expect((await as('outsider', 'GET', `/api/views?teamId=${teamId}`)).json.data).toEqual([]);
    // what the view keeps is what the jobs list takes
    const query = new URLSearchParams(saved.json.view.params).toString();
    expect((await as('viewer', 'GET', `/api/jobs?${query}`)).status).toBe(200);
  });

  test('a viewer may not save, change or delete one (403 naming the role); an outsider is told it is not found', async () => {
    const view = (await as('operator', 'POST', '/api/views', { teamId, name: 'Mine', params: {} })).json.view;
    const refused = await as('viewer', 'POST', '/api/views', { teamId, name: 'Not mine', params: {} });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain('operator');
    expect((await as('viewer', 'PATCH', `/api/views/${view.id}`, { name: 'x' })).status).toBe(403);
    expect((await as('viewer', 'DELETE', `/api/views/${view.id}`)).status).toBe(403);
    expect((await as('outsider', 'PATCH', `/api/views/${view.id}`, { name: 'x' })).status).toBe(404);
    expect((await as('outsider', 'DELETE', `/api/views/${view.id}`)).status).toBe(404);
    expect((await as('outsider', 'POST', '/api/views', { teamId, name: 'In', params: {} })).status).toBe(404);
  });

  test('renamed, refiltered and deleted by an operator; names are unique in the team whatever their case', async () => {
    const view = (await as('operator', 'POST', '/api/views', { teamId, name: 'Slow', params: { sortBy: 'durationMs' } })).json.view;
    expect((await as('operator', 'POST', '/api/views', { teamId, name: 'SLOW', params: {} })).status).toBe(409);
    const changed = await as('operator', 'PATCH', `/api/views/${view.id}`, { name: 'Slowest', params: { sortBy: 'durationMs', sortOrder: 'desc' } });
    expect(changed.json.view).toMatchObject({ name: 'Slowest', params: { sortBy: 'durationMs', sortOrder: 'desc' }, createdAt: view.createdAt });
    expect((await as('operator', 'DELETE', `/api/views/${view.id}`)).status).toBe(204);
    expect((await as('viewer', 'GET', '/api/views')).json.data.map((each: { id: string }) => each.id)).not.toContain(view.id);
    expect((await as('operator', 'DELETE', `/api/views/${view.id}`)).status).toBe(404);
  });

  test('filters the jobs list would refuse are refused naming them: unknown, a page, a bad value, another team\'s connection', async () => {
    const refusal = async (params: Record<string, unknown>) => {
      const answer = await as('operator', 'POST', '/api/views', { teamId, name: `v${Math.random()}`, params });
      expect(answer.status).toBe(400);
      return Object.keys(answer.json.error.details ?? {});
    };
    expect(await refusal({ colour: 'red' })).toEqual(['params.colour']);
    expect(await refusal({ cursor: 'abc' })).toEqual(['params.cursor']);
    expect(await refusal({ state: 'exploded' })).toEqual(['state']);
    expect(await refusal({ sortBy: 'colour' })).toEqual(['sortBy']);
    expect(await refusal({ 'data.': 'x' })).toEqual(['data.']);
    expect(await refusal({ state: 3 })).toEqual(['params.state']);
    expect(await refusal({ connectionId: 'not-theirs' })).toEqual(['params.connectionId']);
    expect(await refusal(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`data.k${i}`, 'v'])))).toEqual(['params']);
  });

  test(`a team keeps at most ${VIEWS_PER_TEAM_MAX} views`, async () => {
    const asAdmin = await withOwnTeam(t.engine, t.engine.accounts.userByEmail(ADMIN.email)!);
    const small = await t.teams.create(asAdmin, 'small');
    await t.teams.addMember(asAdmin, small.id, ADMIN.email, 'admin');
    const admin = await t.login();
    for (let i = 0; i < VIEWS_PER_TEAM_MAX; i++) await t.engine.commit(t.engine.accounts.views.decideCreate(small.id, `view ${i}`, {}, 'u', 0));
    const refused = await t.request('POST', '/api/views', { body: { teamId: small.id, name: 'one more', params: {} }, headers: { cookie: admin } });
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toContain(`at most ${VIEWS_PER_TEAM_MAX}`);
  });

  test("a deleted team's views go with it", async () => {
    const asAdmin = await withOwnTeam(t.engine, t.engine.accounts.userByEmail(ADMIN.email)!);
    const brief = await t.teams.create(asAdmin, 'brief');
    await t.engine.commit(t.engine.accounts.views.decideCreate(brief.id, 'gone soon', {}, 'u', 0));
    expect(t.engine.accounts.views.viewsOf(brief.id)).toHaveLength(1);
    await t.teams.delete(asAdmin, brief.id);
    expect(t.engine.accounts.views.viewsOf(brief.id)).toEqual([]);
  });

  test('every change is in the audit log with its team', async () => {
    const before = t.engine.audit.size;
    await as('operator', 'POST', '/api/views', { teamId, name: 'Audited', params: {} });
    const [entry] = t.engine.audit.query({ limit: 1, nowMs: t.clock.nowMs() }).entries;
    expect(t.engine.audit.size).toBe(before + 1);
    expect(entry).toMatchObject({ action: 'view.create', email: 'operator@example.com', teamId, outcome: 'success', target: 'Audited' });
  });
});
