/**
 * The team routes and what teams change for everyone else: a connection shared by a team
 * is read by each member with their role, a user in two teams reads both and a user in one
 * reads one (by list, by id and in the live stream), and a member removed from a team
 * loses it at once, their open stream included. Every answer is checked against the
 * OpenAPI document by the test app.
 */
import { describe, expect, test } from 'bun:test';
import { MEMBERS_PER_TEAM_MAX } from '../../actors/accounts/team-book.ts';
import { jobEvent } from '../support/events.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { ADMIN, BASE, T0, testApp, type TestApp } from '../support/test-app.ts';

async function asAdmin(t: TestApp) {
  const user = t.engine.accounts.userByEmail(ADMIN.email)!;
  return { user, cookie: await t.sessionCookieOf(user) };
}

async function createTeam(t: TestApp, cookie: string, name: string): Promise<string> {
  const created = await t.request('POST', '/api/teams', { body: { name }, headers: { cookie } });
  expect(created.status).toBe(201);
  return created.json.team.id;
}

async function addMember(t: TestApp, cookie: string, teamId: string, email: string, role: string) {
  return t.request('POST', `/api/teams/${teamId}/members`, { body: { email, role }, headers: { cookie } });
}

describe('teams and members through the routes', () => {
  test('the instance admin creates a team and adds members; members see it with their role; a team admin renames it and manages members', async () => {
    const t = await testApp();
    const admin = await asAdmin(t);
    const teamId = await createTeam(t, admin.cookie, 'production');
    const lead = await t.userWithSession('lead@example.com');
    const dev = await t.userWithSession('dev@example.com');
    expect((await addMember(t, admin.cookie, teamId, 'Lead@Example.com', 'admin')).json.member).toMatchObject({ email: 'lead@example.com', role: 'admin', disabled: false });
    expect((await addMember(t, lead.cookie, teamId, 'dev@example.com', 'viewer')).status).toBe(201);
    const unknown = await addMember(t, lead.cookie, teamId, 'nobody@example.com', 'viewer');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toBe("no user with email 'nobody@example.com': the instance admin creates users");

    const mine = await t.request('GET', '/api/teams', { headers: { cookie: dev.cookie } });
    expect(mine.json.data).toEqual([{ id: teamId, name: 'production', role: 'viewer', members: 2, connections: 0, createdAt: expect.any(String) }]);
    const everyTeam = await t.request('GET', '/api/teams', { headers: { cookie: admin.cookie } });
    expect(everyTeam.json.data.map((team: { name: string; role: string | null }) => [team.name, team.role])).toEqual([['default', 'admin'], ['production', null]]);

    const renamed = await t.request('PATCH', `/api/teams/${teamId}`, { body: { name: 'prod' }, headers: { cookie: lead.cookie } });
    expect(renamed.json.team).toMatchObject({ name: 'prod', role: 'admin' });
    expect((await t.request('PATCH', `/api/teams/${teamId}`, { body: { name: 'x' }, headers: { cookie: dev.cookie } })).status).toBe(403);

    const promoted = await t.request('PATCH', `/api/teams/${teamId}/members/${dev.user.id}`, { body: { role: 'operator' }, headers: { cookie: lead.cookie } });
    expect(promoted.json.member).toMatchObject({ userId: dev.user.id, role: 'operator' });
    const members = await t.request('GET', `/api/teams/${teamId}/members`, { headers: { cookie: dev.cookie } });
    expect(members.json.data.map((member: { email: string; role: string }) => [member.email, member.role])).toEqual([['lead@example.com', 'admin'], ['dev@example.com', 'operator']]);
    const lastAdmin = await t.request('PATCH', `/api/teams/${teamId}/members/${lead.user.id}`, { body: { role: 'viewer' }, headers: { cookie: lead.cookie } });
    expect(lastAdmin.status).toBe(409);
    expect((await t.request('DELETE', `/api/teams/${teamId}/members/${dev.user.id}`, { headers: { cookie: lead.cookie } })).status).toBe(204);
    expect((await t.request('GET', `/api/teams/${teamId}`, { headers: { cookie: dev.cookie } })).status).toBe(404);
  });

  test('a connection is created in a named team, or the creator\'s first team where they are an admin; without one it is refused saying why', async () => {
    const t = await testApp();
    const admin = await asAdmin(t);
    const teamId = await createTeam(t, admin.cookie, 'production');
    const viewer = await t.userWithSession('viewer@example.com');
    await addMember(t, admin.cookie, teamId, 'viewer@example.com', 'viewer');
    const refused = await t.request('POST', '/api/connections', { body: { name: 'prod' }, headers: { cookie: viewer.cookie } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain('you are not an admin of any team');
    const named = await t.request('POST', '/api/connections', { body: { name: 'prod', teamId }, headers: { cookie: viewer.cookie } });
    expect(named.status).toBe(403);
    expect(named.json.error.message).toBe("to create connections you need the admin role in team 'production'; yours is viewer");
    // the instance admin is no member of production: its data, and making it, are not theirs
    expect((await t.request('POST', '/api/connections', { body: { name: 'prod', teamId }, headers: { cookie: admin.cookie } })).status).toBe(404);
    const byDefault = await t.request('POST', '/api/connections', { body: { name: 'mine' }, headers: { cookie: admin.cookie } });
    expect(byDefault.status).toBe(201);
    expect(byDefault.json.connection).toMatchObject({ name: 'mine', role: 'admin', teamId: t.engine.accounts.teams.teamByName('default')!.id });
  });

  test('a team that owns connections is not deleted; once they are gone it is, with its memberships', async () => {
    const t = await testApp();
    const admin = await asAdmin(t);
    const teamId = await createTeam(t, admin.cookie, 'production');
    await addMember(t, admin.cookie, teamId, ADMIN.email, 'admin');
    const connection = await t.createConnection(admin.cookie, 'x');
    // the admin's first admin team is `default`; move on to production by naming it
    const inProduction = await t.request('POST', '/api/connections', { body: { name: 'prod', teamId }, headers: { cookie: admin.cookie } });
    const refused = await t.request('DELETE', `/api/teams/${teamId}`, { headers: { cookie: admin.cookie } });
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toBe("team 'production' still has 1 connection; delete them first");
    expect((await t.request('DELETE', `/api/connections/${inProduction.json.connection.id}`, { headers: { cookie: admin.cookie } })).status).toBe(204);
    expect((await t.request('DELETE', `/api/teams/${teamId}`, { headers: { cookie: admin.cookie } })).status).toBe(204);
    expect(t.engine.accounts.teams.membershipsOf(t.engine.accounts.userByEmail(ADMIN.email)!.id).map((membership) => membership.teamId)).not.toContain(teamId);
    expect(t.engine.accounts.connections.has(connection.id)).toBe(true);
  });

  test(`past ${MEMBERS_PER_TEAM_MAX} members a team refuses another with 409 in the envelope`, async () => {
    const t = await testApp();
    const admin = await asAdmin(t);
    const teamId = await createTeam(t, admin.cookie, 'crowded');
    for (let i = 0; i < MEMBERS_PER_TEAM_MAX; i++) {
      const user = { id: `u${i}`, email: `u${i}@example.com`, passwordHash: '', isAdmin: false, createdAtMs: T0 };
      await t.engine.commit({ t: 'user.created', user });
      await t.engine.commit({ t: 'member.set', membership: { teamId, userId: user.id, role: 'viewer', sinceMs: T0 } });
    }
    await t.userWithSession('late@example.com');
    const refused = await addMember(t, admin.cookie, teamId, 'late@example.com', 'viewer');
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'CONFLICT', message: `team 'crowded' has ${MEMBERS_PER_TEAM_MAX} members, the most a team can have`, docs_url: '/docs/errors#CONFLICT' });
  });
});

describe('tenant isolation across teams', () => {
  /** Two teams, each with a connection holding one job; a user in both, one in each. */
  async function twoTeams() {
    const t = await testApp();
    const admin = await asAdmin(t);
    const people = {
      both: await t.userWithSession('both@example.com'),
      onlyA: await t.userWithSession('a@example.com'),
      onlyB: await t.userWithSession('b@example.com'),
    };
    const connections: Record<'A' | 'B', { id: string; apiKey: string; jobId: string }> = {} as never;
    for (const name of ['A', 'B'] as const) {
      const teamId = await createTeam(t, admin.cookie, `team ${name}`);
      await addMember(t, admin.cookie, teamId, 'both@example.com', 'admin');
      await addMember(t, admin.cookie, teamId, name === 'A' ? 'a@example.com' : 'b@example.com', 'viewer');
      const created = await t.request('POST', '/api/connections', { body: { name: `conn ${name}`, teamId }, headers: { cookie: people.both.cookie } });
      const { id } = created.json.connection;
      await t.ingest(created.json.apiKey, [jobEvent(id, T0, { externalId: `job-${name}`, name: `tasks.${name}` })]);
      connections[name] = { id, apiKey: created.json.apiKey, jobId: t.engine.connection(id)!.jobs.getByExternalId(`job-${name}`)!.id };
    }
    return { t, people, connections };
  }

  test('a user in both teams reads both; a user in one reads that one only, by list and by id', async () => {
    const { t, people, connections } = await twoTeams();
    const names = async (cookie: string, path: string) => (await t.request('GET', path, { headers: { cookie } })).json;
    expect((await names(people.both.cookie, '/api/jobs')).data.map((job: { externalId: string }) => job.externalId).sort()).toEqual(['job-A', 'job-B']);
    expect((await names(people.onlyA.cookie, '/api/jobs')).data.map((job: { externalId: string }) => job.externalId)).toEqual(['job-A']);
    expect((await names(people.onlyA.cookie, `/api/jobs?connectionId=${connections.B.id}`)).data).toEqual([]);
    expect((await t.request('GET', `/api/jobs/${connections.B.jobId}`, { headers: { cookie: people.onlyA.cookie } })).status).toBe(404);
    expect((await t.request('GET', `/api/jobs/${connections.B.jobId}`, { headers: { cookie: people.onlyB.cookie } })).status).toBe(200);
    expect((await names(people.onlyB.cookie, '/api/connections')).data.map((connection: { id: string; role: string }) => [connection.id, connection.role])).toEqual([[connections.B.id, 'viewer']]);
    const text = JSON.stringify([await names(people.onlyA.cookie, '/api/queues'), await names(people.onlyA.cookie, '/api/workers'), await names(people.onlyA.cookie, '/api/alerts'), await names(people.onlyA.cookie, '/api/auth/me')]);
    expect(text).not.toContain(connections.B.id);
  });

  test("the live stream of a user in one team carries nothing of the other's; removing them from their team ends it at once", async () => {
    const { t, people, connections } = await twoTeams();
    const served = t.serve();
    try {
      const aborted = new AbortController();
      const response = await fetch(`${served.baseUrl}/api/events/stream`, { headers: { cookie: people.onlyA.cookie }, signal: aborted.signal });
      expect(response.status).toBe(200);
      const reader = new SseMessageReader(response.body!);
      await t.ingest(connections.B.apiKey, [jobEvent(connections.B.id, T0 + 1, { externalId: 'job-B', state: 'active' })]);
      await t.ingest(connections.A.apiKey, [jobEvent(connections.A.id, T0 + 1, { externalId: 'job-A', state: 'active' })]);
      const seen: string[] = [];
      for (let message = await reader.next(); message !== undefined; message = await reader.next()) {
        if (message.event === 'job') seen.push(JSON.parse(message.data!).externalId);
        if (seen.includes('job-A')) break;
      }
      expect(seen).toEqual(['job-A']);
      const teamA = t.engine.accounts.teams.teamByName('team A')!.id;
      expect((await t.request('DELETE', `/api/teams/${teamA}/members/${people.onlyA.user.id}`, { headers: { cookie: people.both.cookie } })).status).toBe(204);
      let ended = false;
      for (let message = await reader.next(); ; message = await reader.next()) {
        if (message === undefined) {
          ended = true;
          break;
        }
      }
      expect(ended).toBe(true);
      expect(t.streamLog.at(-1)).toContain('its session or access ended');
      aborted.abort();
    } finally {
      await served.stop();
    }
  });
});

describe('request bodies', () => {
  test('a team name, an email and a role are checked; unknown fields are refused', async () => {
    const t = await testApp();
    const admin = await asAdmin(t);
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 'ok', extra: 1 }]) {
      const refused = await t.request('POST', '/api/teams', { body, headers: { cookie: admin.cookie } });
      expect({ body, status: refused.status, code: refused.json.error.code }).toEqual({ body, status: 400, code: 'VALIDATION_ERROR' });
    }
    const teamId = await createTeam(t, admin.cookie, 'production');
    const badRole = await t.request('POST', `/api/teams/${teamId}/members`, { body: { email: ADMIN.email, role: 'owner' }, headers: { cookie: admin.cookie } });
    expect(badRole.status).toBe(400);
    expect(Object.keys(badRole.json.error.details)).toEqual(['role']);
    expect((await t.request('POST', `${BASE}/api/teams/${teamId}/members`.slice(BASE.length), { rawBody: 'not json', headers: { cookie: admin.cookie, 'content-type': 'application/json' } })).status).toBe(400);
  });
});
