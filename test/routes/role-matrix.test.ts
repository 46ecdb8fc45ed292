/**
 * The role matrix, as a table test over every route the app serves (its own route table,
 * not a list written here): each route is called by six people, and what each gets is
 * what the matrix below says. The matrix is written out here on its own, so a rule changed
 * in src/http/access-rules.ts without a change here fails; a route served without a row
 * here, or without a rule there, fails too. docs/security.md prints the same matrix.
 *
 * The people: nobody signed in; an outsider (admin of another team); a viewer, an operator
 * and an admin of the team `production`, which owns the connection the calls are about;
 * and the instance admin, who is in no team of the connection (and so reads nothing of it).
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Role } from '../../actors/accounts/roles.ts';
import { describeRule, ROUTE_RULES, ruleOf, takesApiKey, type RouteRule } from '../../src/http/access-rules.ts';
import { UI_PAGE_PATHS } from '../../src/routes/ui.ts';
import { PUBLIC_RESOLVER } from '../alerts/alert-fixture.ts';
import { jobEvent, workerEvent } from '../support/events.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { ADMIN, T0 as T, testApp, type TestApp } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

type Persona = 'nobody' | 'outsider' | 'viewer' | 'operator' | 'teamAdmin' | 'instanceAdmin';
const PERSONAS: Persona[] = ['nobody', 'outsider', 'viewer', 'operator', 'teamAdmin', 'instanceAdmin'];

/**
 * Who may call each route: `anyone`; a bearer token (`apiKey`, `metricsToken`: a cookie
 * alone is refused); `signedIn`; `instanceAdmin`; a role in the connection's team (`or
 * apiKey`: or, without a session, the connection's API key, for that connection only); or
 * `manage` a role: the role in the team, or the instance admin (routes about the team as a team).
 */
type Who = 'anyone' | 'apiKey' | 'metricsToken' | 'signedIn' | 'instanceAdmin' | Role | `${Role} or apiKey` | `manage ${Role}` | `any ${Role}`;

const MATRIX: Record<string, Who> = {
  'GET /api/health': 'anyone',
  'GET /metrics': 'metricsToken',
  'GET /docs/errors': 'anyone',
  'GET /openapi.json': 'anyone',
  'GET /docs': 'anyone',
  'GET /docs/assets/:name': 'anyone',
  'GET /assets/:name': 'anyone',
  'POST /api/auth/login': 'anyone',
  'POST /api/auth/logout': 'anyone',
  'GET /api/auth/me': 'signedIn',
  'GET /api/auth/methods': 'anyone',
  'GET /api/auth/oidc/start': 'anyone',
  'GET /api/auth/oidc/callback': 'anyone',
  'POST /api/auth/password': 'signedIn',
  'POST /api/auth/set-password': 'anyone',
  'GET /api/users': 'instanceAdmin',
  'POST /api/users': 'instanceAdmin',
  'POST /api/users/:id/disable': 'instanceAdmin',
  'POST /api/users/:id/enable': 'instanceAdmin',
  'DELETE /api/users/:id': 'instanceAdmin',
  'POST /api/users/:id/password-reset': 'instanceAdmin',
  'GET /api/teams': 'signedIn',
  'POST /api/teams': 'instanceAdmin',
  'GET /api/teams/:id': 'manage viewer',
  'PATCH /api/teams/:id': 'manage admin',
  'DELETE /api/teams/:id': 'instanceAdmin',
  'GET /api/teams/:id/members': 'manage viewer',
  'POST /api/teams/:id/members': 'manage admin',
  'PATCH /api/teams/:id/members/:userId': 'manage admin',
  'DELETE /api/teams/:id/members/:userId': 'manage admin',
  'POST /api/connections': 'admin',
  'GET /api/connections': 'viewer',
  'DELETE /api/connections/:id': 'admin',
  'POST /api/ingest': 'apiKey',
  'GET /api/jobs': 'viewer',
  'GET /api/jobs/:id': 'viewer',
  'GET /api/jobs/:id/workflow': 'viewer',
  'GET /api/queues': 'viewer',
  'GET /api/workers': 'viewer',
  'POST /api/jobs/bulk/revoke': 'operator',
  'POST /api/jobs/bulk/retry': 'operator',
  'POST /api/jobs/:id/revoke': 'operator',
  'POST /api/jobs/:id/retry': 'operator',
  'POST /api/jobs/:id/promote': 'operator',
  'POST /api/jobs/:id/delete': 'operator',
  'POST /api/jobs/:id/kill': 'operator',
  'GET /api/queues/:id': 'viewer',
  'GET /api/queues/:id/clean-estimate': 'viewer',
  'POST /api/queues/:id/pause': 'operator',
  'POST /api/queues/:id/resume': 'operator',
  'POST /api/queues/:id/clean': 'operator',
  'POST /api/queues/:id/retry-failed': 'operator',
  'POST /api/queues/:id/concurrency': 'operator',
  'POST /api/workers/:id/quiet': 'operator',
  'POST /api/workers/:id/stop': 'operator',
  'POST /api/workers/:id/pool': 'operator',
  'POST /api/tasks/rate-limit': 'operator',
  'GET /api/commands/:id': 'viewer',
  'GET /api/capabilities': 'viewer',
  'PUT /api/agent/capabilities': 'apiKey',
  'GET /api/alert-channels': 'viewer',
  'POST /api/alert-channels': 'admin',
  'DELETE /api/alert-channels/:id': 'admin',
  'POST /api/alert-channels/:id/test': 'admin',
  'GET /api/alert-rules': 'viewer',
  'POST /api/alert-rules': 'admin',
  'POST /api/alert-rules/preview': 'admin',
  'PATCH /api/alert-rules/:id': 'admin',
  'DELETE /api/alert-rules/:id': 'admin',
  'GET /api/alerts': 'viewer',
  'GET /api/metrics/tasks': 'viewer',
  'GET /api/metrics/series': 'viewer',
  'GET /api/markers': 'viewer',
  'POST /api/markers': 'operator or apiKey',
  'DELETE /api/markers/:id': 'operator',
  'GET /api/agent/connection': 'apiKey',
  'GET /api/agent/commands': 'apiKey',
  'POST /api/agent/commands/ack': 'apiKey',
  'GET /api/events/stream': 'viewer',
  'POST /api/admin/backup': 'instanceAdmin',
  'GET /api/audit': 'any admin',
  'GET /api/views': 'viewer',
  'POST /api/views': 'operator',
  'PATCH /api/views/:id': 'operator',
  'DELETE /api/views/:id': 'operator',
  ...Object.fromEntries(UI_PAGE_PATHS.map((path) => [`GET ${path}`, 'anyone' as const])),
};

type Outcome = 'allowed' | 'hidden' | 'forbidden' | 'unauthenticated' | 'token only';
const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
const MEMBER_ROLE: Partial<Record<Persona, Role>> = { viewer: 'viewer', operator: 'operator', teamAdmin: 'admin' };

function expectedOutcome(who: Who, persona: Persona): Outcome {
  if (who === 'anyone') return 'allowed';
  if (who === 'apiKey' || who === 'metricsToken') return 'token only';
  if (persona === 'nobody') return 'unauthenticated';
  if (who === 'signedIn') return 'allowed';
  if (who === 'instanceAdmin') return persona === 'instanceAdmin' ? 'allowed' : 'forbidden';
  // the role in any team (the outsider is an admin of their own), or the instance admin
  if (who.startsWith('any ')) return persona === 'instanceAdmin' || persona === 'outsider' || persona === 'teamAdmin' ? 'allowed' : 'forbidden';
  const manage = who.startsWith('manage ');
  // the persona calls with their session: a route that also takes the API key needs the role as any other
  const needed = (manage ? who.slice('manage '.length) : who.replace(/ or apiKey$/, '')) as Role;
  if (persona === 'instanceAdmin') return manage ? 'allowed' : 'hidden';
  const role = MEMBER_ROLE[persona];
  if (role === undefined) return 'hidden';
  return RANK[role] >= RANK[needed] ? 'allowed' : 'forbidden';
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
  /** the cookie to send instead of the persona's own (a logout ends the session it is given) */
  cookie?: string | null;
  /** whether the answer shows the production connection's data (lists answer 200 to anyone signed in, empty for outsiders) */
  sees?: (json: any) => boolean;
}

let t: TestApp;
let fixture: Awaited<ReturnType<typeof setUp>>;
let serial = 0;
const next = (): number => ++serial;

async function setUp() {
  t = await testApp({ alerts: { resolve: PUBLIC_RESOLVER, send: async () => ({ ok: true, httpStatus: 200, error: null, retryable: false }) } });
  const instanceAdmin = t.engine.accounts.userByEmail(ADMIN.email)!;
  const cookies: Partial<Record<Persona, string>> = { instanceAdmin: await t.sessionCookieOf(instanceAdmin) };
  const users: Partial<Record<Persona, string>> = { instanceAdmin: instanceAdmin.id };
  for (const persona of ['outsider', 'viewer', 'operator', 'teamAdmin'] as const) {
    const { user, cookie } = await t.userWithSession(`${persona}@example.com`);
    cookies[persona] = cookie;
    users[persona] = user.id;
  }
  await withOwnTeam(t.engine, t.engine.accounts.users.get(users.outsider!)!, 'other');
  const production = await t.teams.create(await withOwnTeam(t.engine, instanceAdmin), 'production');
  const asInstanceAdmin = await withOwnTeam(t.engine, instanceAdmin);
  for (const [persona, role] of [['teamAdmin', 'admin'], ['operator', 'operator'], ['viewer', 'viewer']] as const) {
    await t.teams.addMember(asInstanceAdmin, production.id, `${persona}@example.com`, role);
  }
  const teamAdmin = await withOwnTeam(t.engine, t.engine.accounts.users.get(users.teamAdmin!)!);
  const connection = await t.connections.create(teamAdmin, 'prod', production.id);
  const channel = await t.alerts.createChannel(teamAdmin, connection.connection.id, { name: 'ops', url: 'https://hooks.example.com/secret-path', format: 'json', dashboardUrl: null });
  const rule = await t.alerts.createRule(teamAdmin, connection.connection.id, { name: 'failures', kind: 'failure_rate', queue: null, task: null, threshold: 0.1, windowSeconds: 300, channelIds: [], includePaused: false });
  await t.ingest(connection.apiKey, Array.from({ length: 6 }, (_, i) => jobEvent(connection.connection.id, T - 1_000, { externalId: `failed-${i}`, state: 'failed' })));
  await t.alerts.evaluate([connection.connection.id]);
  // a deploy marker, for the series read to show
  const marked = await t.request('POST', '/api/markers', { headers: { authorization: `Bearer ${connection.apiKey}` }, body: { connectionId: connection.connection.id, name: 'deploy v1', at: new Date(T - 120_000).toISOString() } });
  if (marked.status !== 201) throw new Error(`marker not added: ${marked.status} ${marked.text}`);
  const loginUser = 'login@example.com';
  await t.engine.commit({ t: 'user.created', user: { id: 'login-user', email: loginUser, passwordHash: await Bun.password.hash('a login password', { algorithm: 'argon2id', memoryCost: 8, timeCost: 1 }), isAdmin: false, createdAtMs: T } });

  /** A fresh queued job of the connection: its id (each action needs one it has not acted on). */
  async function freshJob(state = 'queued', framework = 'celery'): Promise<string> {
    const externalId = `job-${next()}`;
    await t.ingest(connection.apiKey, [jobEvent(connection.connection.id, T, { externalId, state }, { framework })]);
    return t.engine.connection(connection.connection.id)!.jobs.getByExternalId(externalId)!.id;
  }
  /** A fresh queue of the connection (one job in it): its id (a pause pending on one queue is not asked twice). */
  async function freshQueue(): Promise<string> {
    const queue = `queue-${next()}`;
    await t.ingest(connection.apiKey, [jobEvent(connection.connection.id, T, { externalId: `${queue}-job`, queue, state: 'failed' }, { framework: 'bullmq' })]);
    return t.engine.connection(connection.connection.id)!.queues.get(queue)!.id;
  }
  /** A fresh online worker of the connection: its id. */
  async function freshWorker(): Promise<string> {
    const externalId = `worker-${next()}`;
    await t.ingest(connection.apiKey, [workerEvent(connection.connection.id, T, { externalId })]);
    return t.engine.connection(connection.connection.id)!.workers.get(externalId)!.id;
  }
  /** A command asked by the team's admin (a queue's pause): its id. */
  async function freshCommand(): Promise<string> {
    const answer = await t.request('POST', `/api/queues/${await freshQueue()}/pause`, { body: {}, headers: { cookie: cookies.teamAdmin! } });
    return answer.json.commandId;
  }
  /** A view of production's, saved by its team admin: its id. */
  async function freshView(): Promise<string> {
    const record = t.engine.accounts.views.decideCreate(production.id, `view ${next()}`, { state: 'failed' }, users.teamAdmin!, T);
    await t.engine.commit(record);
    return record.view.id;
  }
  /** A fresh marker of the connection (each delete needs one still there), recorded below the routes so that it adds no audit entry of its own. */
  async function freshMarker(): Promise<{ id: string }> {
    const record = t.engine.connection(connection.connection.id)!.decideAddMarker(`release ${next()}`, T - 60_000, 'api key', t.clock.nowMs());
    await t.engine.commit(record);
    return { id: record.marker.id };
  }
  /** A fresh member of production (a viewer), for the calls that change or remove one. */
  async function freshMember(): Promise<string> {
    const { user } = await t.userWithSession(`member-${next()}@example.com`);
    await t.teams.addMember(asInstanceAdmin, production.id, user.email, 'viewer');
    return user.id;
  }
  return {
    cookies, users, production, connection, channel, rule, loginUser, freshJob, freshMember, freshQueue, freshWorker, freshCommand, freshView, freshMarker,
    teamAdmin, asInstanceAdmin,
    connectionId: connection.connection.id,
  };
}

const seesConnection = (json: any) => JSON.stringify(json).includes(fixture.connectionId);

/** How each route is called: valid requests about the production connection and team. */
const CALLS: Record<string, (persona: Persona) => Promise<Call> | Call> = {
  'GET /api/health': () => ({ method: 'GET', path: '/api/health' }),
  'GET /metrics': () => ({ method: 'GET', path: '/metrics' }),
  'GET /docs/errors': () => ({ method: 'GET', path: '/docs/errors' }),
  'GET /openapi.json': () => ({ method: 'GET', path: '/openapi.json' }),
  'GET /docs': () => ({ method: 'GET', path: '/docs' }),
  'GET /docs/assets/:name': () => ({ method: 'GET', path: '/docs/assets/swagger-ui.css' }),
  'GET /assets/:name': () => ({ method: 'GET', path: '/assets/none.js' }),
  'POST /api/auth/login': () => ({ method: 'POST', path: '/api/auth/login', body: { email: fixture.loginUser, password: 'a login password' } }),
  'POST /api/auth/logout': async (persona) => ({
    method: 'POST',
    path: '/api/auth/logout',
    cookie: persona === 'nobody' ? null : await t.sessionCookieOf(t.engine.accounts.users.get(fixture.users[persona]!)!),
  }),
  'GET /api/auth/me': () => ({ method: 'GET', path: '/api/auth/me' }),
  'GET /api/auth/methods': () => ({ method: 'GET', path: '/api/auth/methods' }),
  // single sign-on is not set up in this app: 404 to everyone (test/routes/single-sign-on.test.ts has it set up)
  'GET /api/auth/oidc/start': () => ({ method: 'GET', path: '/api/auth/oidc/start' }),
  'GET /api/auth/oidc/callback': () => ({ method: 'GET', path: '/api/auth/oidc/callback?code=x&state=y' }),
  // a wrong current password (the people here have none): 400 for whoever is signed in
  'POST /api/auth/password': () => ({ method: 'POST', path: '/api/auth/password', body: { currentPassword: 'not the password', newPassword: 'a new long password' } }),
  'POST /api/auth/set-password': () => ({ method: 'POST', path: '/api/auth/set-password', body: { token: 'no-such-link', password: 'a new long password' } }),
  'GET /api/users': () => ({ method: 'GET', path: '/api/users' }),
  'POST /api/users': () => ({ method: 'POST', path: '/api/users', body: { email: `new-${next()}@example.com` } }),
  'POST /api/users/:id/disable': async () => ({ method: 'POST', path: `/api/users/${(await t.userWithSession(`disabled-${next()}@example.com`)).user.id}/disable` }),
  'POST /api/users/:id/enable': async () => ({ method: 'POST', path: `/api/users/${(await t.userWithSession(`enabled-${next()}@example.com`)).user.id}/enable` }),
  'DELETE /api/users/:id': async () => ({ method: 'DELETE', path: `/api/users/${(await t.userWithSession(`removed-${next()}@example.com`)).user.id}` }),
  'POST /api/users/:id/password-reset': async () => ({ method: 'POST', path: `/api/users/${(await t.userWithSession(`reset-${next()}@example.com`)).user.id}/password-reset` }),
  'GET /api/teams': () => ({ method: 'GET', path: '/api/teams' }),
  'POST /api/teams': () => ({ method: 'POST', path: '/api/teams', body: { name: `team ${next()}` } }),
  'GET /api/teams/:id': () => ({ method: 'GET', path: `/api/teams/${fixture.production.id}` }),
  // the same name again: allowed, and the team keeps its name for the other calls
  'PATCH /api/teams/:id': () => ({ method: 'PATCH', path: `/api/teams/${fixture.production.id}`, body: { name: 'production' } }),
  'DELETE /api/teams/:id': async () => ({ method: 'DELETE', path: `/api/teams/${(await t.teams.create(fixture.asInstanceAdmin, `doomed ${next()}`)).id}` }),
  'GET /api/teams/:id/members': () => ({ method: 'GET', path: `/api/teams/${fixture.production.id}/members` }),
  'POST /api/teams/:id/members': async () => {
    const { user } = await t.userWithSession(`joining-${next()}@example.com`);
    return { method: 'POST', path: `/api/teams/${fixture.production.id}/members`, body: { email: user.email, role: 'viewer' } };
  },
  'PATCH /api/teams/:id/members/:userId': async () => ({ method: 'PATCH', path: `/api/teams/${fixture.production.id}/members/${await fixture.freshMember()}`, body: { role: 'operator' } }),
  'DELETE /api/teams/:id/members/:userId': async () => ({ method: 'DELETE', path: `/api/teams/${fixture.production.id}/members/${await fixture.freshMember()}` }),
  'POST /api/connections': () => ({ method: 'POST', path: '/api/connections', body: { name: `c${next()}`, teamId: fixture.production.id } }),
  'GET /api/connections': () => ({ method: 'GET', path: '/api/connections', sees: seesConnection }),
  'DELETE /api/connections/:id': async () => ({ method: 'DELETE', path: `/api/connections/${(await t.connections.create(fixture.teamAdmin, `doomed ${next()}`, fixture.production.id)).connection.id}` }),
  'POST /api/ingest': () => ({ method: 'POST', path: '/api/ingest', body: { events: [] } }),
  'GET /api/jobs': () => ({ method: 'GET', path: '/api/jobs', sees: seesConnection }),
  'GET /api/jobs/:id': async () => ({ method: 'GET', path: `/api/jobs/${await fixture.freshJob()}` }),
  'GET /api/jobs/:id/workflow': async () => ({ method: 'GET', path: `/api/jobs/${await fixture.freshJob()}/workflow` }),
  'GET /api/queues': () => ({ method: 'GET', path: '/api/queues', sees: seesConnection }),
  'GET /api/workers': async () => {
    await t.ingest(fixture.connection.apiKey, [{ type: 'worker_state_change', timestamp: new Date(T).toISOString(), framework: 'celery', connectionId: fixture.connectionId, worker: { externalId: 'w1', hostname: 'h', state: 'online' } }]);
    return { method: 'GET', path: '/api/workers', sees: seesConnection };
  },
  'POST /api/jobs/bulk/revoke': async () => ({ method: 'POST', path: '/api/jobs/bulk/revoke', body: { ids: [await fixture.freshJob()] }, sees: (json) => json.results.some((result: any) => result.success) }),
  'POST /api/jobs/bulk/retry': async () => ({ method: 'POST', path: '/api/jobs/bulk/retry', body: { ids: [await fixture.freshJob('failed')] }, sees: (json) => json.results.some((result: any) => result.success) }),
  'POST /api/jobs/:id/revoke': async () => ({ method: 'POST', path: `/api/jobs/${await fixture.freshJob()}/revoke` }),
  'POST /api/jobs/:id/retry': async () => ({ method: 'POST', path: `/api/jobs/${await fixture.freshJob('failed')}/retry` }),
  'POST /api/jobs/:id/promote': async () => ({ method: 'POST', path: `/api/jobs/${await fixture.freshJob('scheduled', 'bullmq')}/promote` }),
  'POST /api/jobs/:id/delete': async () => ({ method: 'POST', path: `/api/jobs/${await fixture.freshJob('failed', 'bullmq')}/delete` }),
  'POST /api/jobs/:id/kill': async () => ({ method: 'POST', path: `/api/jobs/${await fixture.freshJob('retrying', 'bullmq')}/kill` }),
  'GET /api/queues/:id': async () => ({ method: 'GET', path: `/api/queues/${await fixture.freshQueue()}` }),
  'GET /api/queues/:id/clean-estimate': async () => ({ method: 'GET', path: `/api/queues/${await fixture.freshQueue()}/clean-estimate?mode=waiting` }),
  'POST /api/queues/:id/pause': async () => ({ method: 'POST', path: `/api/queues/${await fixture.freshQueue()}/pause` }),
  'POST /api/queues/:id/resume': async () => ({ method: 'POST', path: `/api/queues/${await fixture.freshQueue()}/resume` }),
  'POST /api/queues/:id/clean': async () => ({ method: 'POST', path: `/api/queues/${await fixture.freshQueue()}/clean`, body: { mode: 'waiting' } }),
  'POST /api/queues/:id/retry-failed': async () => ({ method: 'POST', path: `/api/queues/${await fixture.freshQueue()}/retry-failed` }),
  'POST /api/queues/:id/concurrency': async () => ({ method: 'POST', path: `/api/queues/${await fixture.freshQueue()}/concurrency`, body: { concurrency: 3 } }),
  'POST /api/workers/:id/quiet': async () => ({ method: 'POST', path: `/api/workers/${await fixture.freshWorker()}/quiet` }),
  'POST /api/workers/:id/stop': async () => ({ method: 'POST', path: `/api/workers/${await fixture.freshWorker()}/stop` }),
  'POST /api/workers/:id/pool': async () => ({ method: 'POST', path: `/api/workers/${await fixture.freshWorker()}/pool`, body: { delta: 1 } }),
  'POST /api/tasks/rate-limit': () => ({ method: 'POST', path: '/api/tasks/rate-limit', body: { connectionId: fixture.connectionId, name: 'tasks.add', rate: '10/m' } }),
  'GET /api/commands/:id': async () => ({ method: 'GET', path: `/api/commands/${await fixture.freshCommand()}` }),
  // a list over the caller's connections: an outsider's is empty
  'GET /api/capabilities': async () => {
    const agent = { authorization: `Bearer ${fixture.connection.apiKey}` };
    await t.request('PUT', '/api/agent/capabilities', { body: { framework: 'bullmq', agentVersion: '1.0.0', controls: { revoke: { supported: true } } }, headers: agent });
    return { method: 'GET', path: `/api/capabilities?connectionId=${fixture.connectionId}`, sees: (json) => json.data.length > 0 };
  },
  'PUT /api/agent/capabilities': () => ({ method: 'PUT', path: '/api/agent/capabilities', body: { framework: 'bullmq', agentVersion: '1.0.0', controls: {} } }),
  'GET /api/alert-channels': () => ({ method: 'GET', path: '/api/alert-channels', sees: seesConnection }),
  'POST /api/alert-channels': () => ({ method: 'POST', path: '/api/alert-channels', body: { connectionId: fixture.connectionId, name: `ch ${next()}`, url: 'https://hooks.example.com/x', format: 'json' } }),
  'DELETE /api/alert-channels/:id': async () => {
    const channel = await t.alerts.createChannel(fixture.teamAdmin, fixture.connectionId, { name: `doomed ${next()}`, url: 'https://hooks.example.com/y', format: 'json', dashboardUrl: null });
    return { method: 'DELETE', path: `/api/alert-channels/${channel.channel.id}` };
  },
  'POST /api/alert-channels/:id/test': () => ({ method: 'POST', path: `/api/alert-channels/${fixture.channel.channel.id}/test` }),
  'GET /api/alert-rules': () => ({ method: 'GET', path: '/api/alert-rules', sees: seesConnection }),
  'POST /api/alert-rules': () => ({
    method: 'POST',
    path: '/api/alert-rules',
    body: { connectionId: fixture.connectionId, name: `r ${next()}`, kind: 'queue_depth', threshold: 10, windowSeconds: 60, channelIds: [] },
  }),
  'POST /api/alert-rules/preview': () => ({ method: 'POST', path: '/api/alert-rules/preview', body: { connectionId: fixture.connectionId, kind: 'queue_depth', threshold: 10, windowSeconds: 60 } }),
  'PATCH /api/alert-rules/:id': () => ({ method: 'PATCH', path: `/api/alert-rules/${fixture.rule.id}`, body: { name: `renamed ${next()}` } }),
  'DELETE /api/alert-rules/:id': async () => {
    const rule = await t.alerts.createRule(fixture.teamAdmin, fixture.connectionId, { name: `doomed ${next()}`, kind: 'queue_depth', queue: null, task: null, threshold: 5, windowSeconds: 60, channelIds: [], includePaused: false });
    return { method: 'DELETE', path: `/api/alert-rules/${rule.id}` };
  },
  'GET /api/alerts': () => ({ method: 'GET', path: '/api/alerts', sees: seesConnection }),
  // the connection's jobs have task metrics; its marker is in range
  'GET /api/metrics/tasks': () => ({ method: 'GET', path: `/api/metrics/tasks?connectionId=${fixture.connectionId}`, sees: (json) => json.data.length > 0 }),
  'GET /api/metrics/series': () => ({ method: 'GET', path: `/api/metrics/series?connectionId=${fixture.connectionId}`, sees: (json) => json.markers.length > 0 }),
  'GET /api/markers': () => ({ method: 'GET', path: `/api/markers?connectionId=${fixture.connectionId}`, sees: seesConnection }),
  'POST /api/markers': () => ({ method: 'POST', path: '/api/markers', body: { connectionId: fixture.connectionId, name: `deploy ${next()}` } }),
  'DELETE /api/markers/:id': async () => ({ method: 'DELETE', path: `/api/markers/${(await fixture.freshMarker()).id}` }),
  'GET /api/agent/connection': () => ({ method: 'GET', path: '/api/agent/connection' }),
  'GET /api/agent/commands': () => ({ method: 'GET', path: '/api/agent/commands' }),
  'POST /api/agent/commands/ack': () => ({ method: 'POST', path: '/api/agent/commands/ack', body: { ids: ['x'] } }),
  'GET /api/events/stream': () => ({ method: 'GET', path: `/api/events/stream?connectionId=${fixture.connectionId}` }),
  'POST /api/admin/backup': () => ({ method: 'POST', path: '/api/admin/backup' }),
  'GET /api/audit': () => ({ method: 'GET', path: '/api/audit' }),
  'GET /api/views': async () => {
    await fixture.freshView();
    return { method: 'GET', path: '/api/views', sees: (json) => json.data.some((view: { teamId: string }) => view.teamId === fixture.production.id) };
  },
  'POST /api/views': () => ({ method: 'POST', path: '/api/views', body: { teamId: fixture.production.id, name: `view ${next()}`, params: { state: 'failed' } } }),
  'PATCH /api/views/:id': async () => ({ method: 'PATCH', path: `/api/views/${await fixture.freshView()}`, body: { name: `renamed ${next()}` } }),
  'DELETE /api/views/:id': async () => ({ method: 'DELETE', path: `/api/views/${await fixture.freshView()}` }),
};

const callOf = (key: string): ((persona: Persona) => Promise<Call> | Call) => {
  const [method, path] = key.split(' ') as [string, string];
  if (method === 'GET' && (UI_PAGE_PATHS as readonly string[]).includes(path)) return () => ({ method, path: path.replace(':id', 'x') });
  const call = CALLS[key];
  if (call === undefined) throw new Error(`no call for ${key}: add one to CALLS`);
  return call;
};

interface Answer {
  status: number;
  code: string | undefined;
  sees: boolean | undefined;
}

async function answer(persona: Persona, key: string): Promise<Answer> {
  const call = await callOf(key)(persona);
  const cookie = call.cookie === undefined ? fixture.cookies[persona] : call.cookie;
  const headers: Record<string, string> = cookie === undefined || cookie === null ? {} : { cookie };
  if (call.path.startsWith('/api/events/stream')) {
    // an endless stream: a job of the connection changes while it is open, and it is read until that job's event or a second
    const aborted = new AbortController();
    const response = await t.app.handle(new Request(`http://localhost:3000${call.path}`, { headers, signal: aborted.signal }));
    if (response.status !== 200) return { status: response.status, code: ((await response.json()) as { error: { code: string } }).error.code, sees: undefined };
    const reader = new SseMessageReader(response.body!);
    const jobId = await fixture.freshJob();
    const deadline = Bun.sleep(1_000).then(() => undefined);
    let sees = false;
    for (let message = await Promise.race([reader.next(), deadline]); message !== undefined && !sees; message = await Promise.race([reader.next(), deadline])) {
      sees = message.event === 'job' && message.data?.includes(jobId) === true;
    }
    aborted.abort();
    await reader.cancel().catch(() => undefined);
    return { status: response.status, code: undefined, sees };
  }
  const response = await t.request(call.method, call.path, { body: call.body ?? (call.method === 'GET' || call.method === 'DELETE' ? undefined : {}), headers });
  const code = typeof response.json === 'object' ? response.json?.error?.code : undefined;
  return { status: response.status, code, sees: call.sees === undefined || response.status >= 300 ? undefined : call.sees(response.json) };
}

function outcomeOf({ status, code, sees }: Answer): Outcome | string {
  if (status === 401) return 'unauthenticated';
  if (status === 403 && code === 'FORBIDDEN') return 'forbidden';
  if (status === 404) return 'hidden';
  if (status >= 500 && status !== 503) return `a ${status}`;
  if (sees === false) return 'hidden';
  return 'allowed';
}

/** A rule of access-rules.ts in the matrix's terms; undefined for a route without one. */
function whoOfRule(rule: RouteRule | undefined): Who | undefined {
  if (rule === undefined) return undefined;
  if (rule.who !== 'member') return rule.who;
  if (rule.on === 'anyTeam') return `any ${rule.role}`;
  if (rule.on === 'pathTeam') return `manage ${rule.role}`;
  return takesApiKey(rule) ? `${rule.role} or apiKey` : rule.role;
}

const routeKeys = (): string[] => [...new Set(t.app.routes.map((route) => `${route.method} ${route.path}`))];

beforeAll(async () => {
  fixture = await setUp();
}, 60_000);

describe('the role matrix', () => {
  test('every route the app serves has a row here and a rule in access-rules.ts, and the two agree', () => {
    const keys = routeKeys();
    expect(keys.length).toBeGreaterThan(50);
    expect(keys.filter((key) => MATRIX[key] === undefined)).toEqual([]);
    expect(Object.keys(MATRIX).filter((key) => !keys.includes(key))).toEqual([]);
    const rules = Object.fromEntries(keys.map((key) => [key, whoOfRule(ruleOf(key.split(' ')[0]!, key.split(' ')[1]!, UI_PAGE_PATHS))]));
    expect(rules).toEqual(MATRIX);
  });

  test('each person gets what the matrix says, on every route; every call of a route that changes something, allowed or not, is in the audit log', async () => {
    const wrong: string[] = [];
    for (const key of routeKeys()) {
      for (const persona of PERSONAS) {
        const expected = expectedOutcome(MATRIX[key]!, persona);
        const auditedBefore = t.engine.audit.size;
        const got = await answer(persona, key);
        const audit = ROUTE_RULES[key]?.audit;
        if (audit !== undefined && persona !== 'nobody' && MATRIX[key] !== 'anyone') {
          const written = t.engine.audit.query({ limit: 100, nowMs: t.clock.nowMs() }).entries.slice(0, t.engine.audit.size - auditedBefore);
          const outcome = got.status < 400 ? 'success' : got.status === 401 || got.status === 403 ? 'denied' : 'failed';
          const fitting = written.filter((entry) => entry.action === audit.action && entry.email === `${persona.toLowerCase()}@example.com`.replace('instanceadmin@example.com', ADMIN.email) && entry.outcome === outcome && entry.status === got.status);
          if (written.length === 0 || fitting.length !== written.length) wrong.push(`${key} as ${persona}: audit entries ${JSON.stringify(written.map((entry) => [entry.action, entry.email, entry.outcome, entry.status]))}`);
        }
        const outcome = outcomeOf(got);
        // anyone: never refused (a page or asset that is not built yet may be a 404); a token: a cookie alone is refused (metrics is off here: 404)
        const fits =
          expected === 'token only'
            ? got.status === 401 || (key === 'GET /metrics' && got.status === 404)
            : MATRIX[key] === 'anyone'
              ? outcome === 'allowed' || outcome === 'hidden'
              : outcome === expected;
        if (!fits) wrong.push(`${key} as ${persona}: expected ${expected}, got ${outcome} (${got.status} ${got.code ?? ''})`);
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  test('a refusal for the role says which role the action needs and which the user has, and the attempt is in the audit log', async () => {
    const jobId = await fixture.freshJob();
    const refused = await t.request('POST', `/api/jobs/${jobId}/revoke`, { headers: { cookie: fixture.cookies.viewer! } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toBe("to revoke jobs you need the operator role in team 'production'; yours is viewer");
    const [entry] = t.engine.audit.query({ limit: 1, nowMs: t.clock.nowMs() }).entries;
    expect(entry).toMatchObject({
      userId: fixture.users.viewer,
      email: 'viewer@example.com',
      action: 'job.revoke',
      target: jobId,
      teamId: fixture.production.id,
      connectionId: fixture.connectionId,
      outcome: 'denied',
      status: 403,
      error: "FORBIDDEN: to revoke jobs you need the operator role in team 'production'; yours is viewer",
    });
  });

  test("a search by what jobs were called with reads what the person may read: a member finds the team's job, an outsider and the instance admin nothing", async () => {
    const externalId = `invoice-${next()}`;
    await t.ingest(fixture.connection.apiKey, [jobEvent(fixture.connectionId, T, { externalId, state: 'failed', args: { invoice: 'INV-7', card_number: '4111' } })]);
    const found: Record<string, unknown> = {};
    for (const persona of PERSONAS) {
      const cookie = fixture.cookies[persona];
      const answer = await t.request('GET', '/api/jobs?data.invoice=INV-7', { headers: cookie === undefined ? {} : { cookie } });
      found[persona] = answer.status === 200 ? answer.json.data.map((job: { externalId: string }) => job.externalId) : answer.status;
    }
    expect(found).toEqual({ nobody: 401, outsider: [], viewer: [externalId], operator: [externalId], teamAdmin: [externalId], instanceAdmin: [] });
  });

  test('docs/security.md prints the matrix the server enforces: one row per route, in the words of the rule', () => {
    const text = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'security.md'), 'utf8');
    const rows = new Map<string, string>();
    for (const match of text.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) ([^`]+)` \| ([^|]+) \|/gm)) rows.set(`${match[1]} ${match[2]}`, match[3]!.trim());
    const documented = routeKeys().filter((key) => !key.startsWith('GET /assets') && !(UI_PAGE_PATHS as readonly string[]).includes(key.slice(4)));
    const expected = new Map(documented.map((key) => [key, describeRule(ruleOf(key.split(' ')[0]!, key.split(' ')[1]!, UI_PAGE_PATHS)!)]));
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(expected));
  });
});
