/**
 * Who may call each route, keyed `METHOD path` as Elysia registers it: the one table the
 * access guard (access-guard.ts) enforces before any handler runs, the OpenAPI document
 * states, docs/security.md prints as the role matrix, and test/routes/role-matrix.test.ts
 * checks against the app's own route table (a route without a rule fails that test, and is
 * refused at run time).
 *
 * - `anyone`: no authentication (the route may read credentials itself: login, logout);
 * - `apiKey`, `metricsToken`: a bearer token the route checks itself;
 * - `signedIn`: any signed-in user; what they see is scoped by their teams;
 * - `member` with a role: on `connection`, the role in the team owning the connection the
 *   request names or acts on (checked by the service once it knows which: a read needs
 *   `viewer` and only lists what the user may read; a change refused for the role is 403,
 *   something the user cannot see at all 404); on `bodyTeam`, in the team the body names
 *   (checked by the service too); on `pathTeam`, in the team `:id` of the path, a route
 *   that manages the team as a team (its name, its members), which the instance admin may
 *   too without being a member (checked here); on `anyTeam`, in at least one team, or the
 *   instance admin (checked here);
 * - `instanceAdmin`: the instance admin only (checked here). The instance admin reads no
 *   team's data without being its member.
 *
 * `orApiKey` on a `member` rule on `connection`: a request with a bearer token is the
 * connection's API key instead of a session (the route checks the key, and that the key's
 * connection is the one it names), so an agent or a CI step may do it for its own
 * connection; without a bearer token the role is needed as usual (a deploy marker).
 *
 * `audit` names the action of a route that changes something: its every call, allowed,
 * refused or failed, becomes an entry of the audit log; `writes` says which log the
 * change goes to (its connection's partition or the accounts', in cluster mode).
 */
import type { Role } from '../../actors/accounts/roles.ts';
import { MARKER_WRITE_ROLE } from '../../actors/services/task-metrics-service.ts';
import { bearerToken } from './api-key.ts';

export type AccessRule =
  | { who: 'anyone' | 'apiKey' | 'metricsToken' | 'signedIn' }
  | { who: 'instanceAdmin'; doing: string }
  | { who: 'member'; role: Role; on: 'connection' | 'bodyTeam' | 'view'; orApiKey?: true }
  | { who: 'member'; role: Role; on: 'pathTeam' | 'anyTeam'; doing: string };

export interface AuditSpec {
  action: string;
  writes: 'accounts' | 'connection';
}

export type RouteRule = AccessRule & { audit?: AuditSpec };

const anyone = { who: 'anyone' } as const;
const signedIn = { who: 'signedIn' } as const;
const apiKey = { who: 'apiKey' } as const;
const reads = { who: 'member', role: 'viewer', on: 'connection' } as const;
const instanceAdmin = (doing: string, action: string): RouteRule => ({ who: 'instanceAdmin', doing, audit: { action, writes: 'accounts' } });
const onConnection = (role: Role, action: string, writes: AuditSpec['writes'] = 'connection'): RouteRule => ({ who: 'member', role, on: 'connection', audit: { action, writes } });
/** a change to one connection that its API key may make too */
const onConnectionOrKey = (role: Role, action: string): RouteRule => ({ who: 'member', role, on: 'connection', orApiKey: true, audit: { action, writes: 'connection' } });
const teamAdmin = (doing: string, action: string): RouteRule => ({ who: 'member', role: 'admin', on: 'pathTeam', doing, audit: { action, writes: 'accounts' } });

export const ROUTE_RULES: Readonly<Record<string, RouteRule>> = {
  'GET /api/health': anyone,
  'GET /metrics': { who: 'metricsToken' },
  'GET /docs/errors': anyone,
  'GET /openapi.json': anyone,
  'GET /docs': anyone,
  'GET /docs/assets/:name': anyone,
  'GET /assets/:name': anyone,
  'POST /api/auth/login': { ...anyone, audit: { action: 'auth.login', writes: 'accounts' } },
  'POST /api/auth/logout': { ...anyone, audit: { action: 'auth.logout', writes: 'accounts' } },
  'GET /api/auth/me': signedIn,
  'GET /api/auth/methods': anyone,
  'GET /api/auth/oidc/start': anyone,
  'GET /api/auth/oidc/callback': { ...anyone, audit: { action: 'auth.sso', writes: 'accounts' } },
  'POST /api/auth/password': { ...signedIn, audit: { action: 'auth.password', writes: 'accounts' } },
  'POST /api/auth/set-password': { ...anyone, audit: { action: 'auth.password-link', writes: 'accounts' } },
  'POST /api/ingest': apiKey,
  'GET /api/agent/connection': apiKey,
  'GET /api/agent/commands': apiKey,
  'POST /api/agent/commands/ack': apiKey,
  'PUT /api/agent/capabilities': apiKey,
  'GET /api/teams': signedIn,
  'POST /api/teams': instanceAdmin('create teams', 'team.create'),
  'GET /api/teams/:id': { who: 'member', role: 'viewer', on: 'pathTeam', doing: 'see this team' },
  'PATCH /api/teams/:id': teamAdmin('rename the team', 'team.rename'),
  'DELETE /api/teams/:id': instanceAdmin('delete teams', 'team.delete'),
  'GET /api/teams/:id/members': { who: 'member', role: 'viewer', on: 'pathTeam', doing: 'see its members' },
  'POST /api/teams/:id/members': teamAdmin('add members', 'member.add'),
  'PATCH /api/teams/:id/members/:userId': teamAdmin("change members' roles", 'member.role'),
  'DELETE /api/teams/:id/members/:userId': teamAdmin('remove members', 'member.remove'),
  'GET /api/users': { who: 'instanceAdmin', doing: 'list users' },
  'POST /api/users': instanceAdmin('create users', 'user.create'),
  'POST /api/users/:id/disable': instanceAdmin('disable users', 'user.disable'),
  'POST /api/users/:id/enable': instanceAdmin('enable users', 'user.enable'),
  'DELETE /api/users/:id': instanceAdmin('remove users', 'user.remove'),
  'POST /api/users/:id/password-reset': instanceAdmin('reset passwords', 'user.password-reset'),
  'GET /api/connections': reads,
  'POST /api/connections': { who: 'member', role: 'admin', on: 'bodyTeam', audit: { action: 'connection.create', writes: 'accounts' } },
  'DELETE /api/connections/:id': onConnection('admin', 'connection.delete', 'accounts'),
  'GET /api/jobs': reads,
  'GET /api/jobs/:id': reads,
  'GET /api/jobs/:id/workflow': reads,
  'POST /api/jobs/:id/revoke': onConnection('operator', 'job.revoke'),
  'POST /api/jobs/:id/retry': onConnection('operator', 'job.retry'),
  'POST /api/jobs/:id/promote': onConnection('operator', 'job.promote'),
  'POST /api/jobs/:id/delete': onConnection('operator', 'job.delete'),
  'POST /api/jobs/:id/kill': onConnection('operator', 'job.kill'),
  'POST /api/jobs/bulk/revoke': onConnection('operator', 'job.revoke'),
  'POST /api/jobs/bulk/retry': onConnection('operator', 'job.retry'),
  'GET /api/queues': reads,
  'GET /api/queues/:id': reads,
  'GET /api/queues/:id/clean-estimate': reads,
  'POST /api/queues/:id/pause': onConnection('operator', 'queue.pause'),
  'POST /api/queues/:id/resume': onConnection('operator', 'queue.resume'),
  'POST /api/queues/:id/clean': onConnection('operator', 'queue.clean'),
  'POST /api/queues/:id/retry-failed': onConnection('operator', 'queue.retry-failed'),
  'POST /api/queues/:id/concurrency': onConnection('operator', 'queue.concurrency'),
  'GET /api/workers': reads,
  'POST /api/workers/:id/quiet': onConnection('operator', 'worker.quiet'),
  'POST /api/workers/:id/stop': onConnection('operator', 'worker.stop'),
  'POST /api/workers/:id/pool': onConnection('operator', 'worker.pool'),
  'POST /api/tasks/rate-limit': onConnection('operator', 'task.rate-limit'),
  'GET /api/commands/:id': reads,
  'GET /api/capabilities': reads,
  'GET /api/events/stream': reads,
  'GET /api/alert-channels': reads,
  'POST /api/alert-channels': onConnection('admin', 'alert-channel.create'),
  'DELETE /api/alert-channels/:id': onConnection('admin', 'alert-channel.delete'),
  'POST /api/alert-channels/:id/test': onConnection('admin', 'alert-channel.test'),
  'GET /api/alert-rules': reads,
  'POST /api/alert-rules': onConnection('admin', 'alert-rule.create'),
  // computes a value and changes nothing: not audited
  'POST /api/alert-rules/preview': { who: 'member', role: 'admin', on: 'connection' },
  'PATCH /api/alert-rules/:id': onConnection('admin', 'alert-rule.update'),
  'DELETE /api/alert-rules/:id': onConnection('admin', 'alert-rule.delete'),
  'GET /api/alerts': reads,
  'GET /api/metrics/tasks': reads,
  'GET /api/metrics/series': reads,
  'GET /api/markers': reads,
  'POST /api/markers': onConnectionOrKey(MARKER_WRITE_ROLE, 'marker.add'),
  'DELETE /api/markers/:id': onConnection(MARKER_WRITE_ROLE, 'marker.delete'),
  'POST /api/admin/backup': instanceAdmin('take backups', 'backup.take'),
  'GET /api/audit': { who: 'member', role: 'admin', on: 'anyTeam', doing: 'read the audit log' },
  // a list over the user's teams: a team they are not in shows nothing
  'GET /api/views': { who: 'member', role: 'viewer', on: 'view' },
  'POST /api/views': { who: 'member', role: 'operator', on: 'bodyTeam', audit: { action: 'view.create', writes: 'accounts' } },
  'PATCH /api/views/:id': { who: 'member', role: 'operator', on: 'view', audit: { action: 'view.update', writes: 'accounts' } },
  'DELETE /api/views/:id': { who: 'member', role: 'operator', on: 'view', audit: { action: 'view.delete', writes: 'accounts' } },
};

/** The rule of `method route` (HEAD as GET); undefined for a route without one. */
export function ruleOf(method: string, route: string, uiPages: readonly string[]): RouteRule | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  if (wanted === 'GET' && uiPages.includes(route)) return anyone;
  return ROUTE_RULES[`${wanted} ${route}`];
}

/**
 * Whether the request needs a session under the rule: the guard authenticates before the
 * handler runs. A rule that takes the connection's API key instead leaves a request with a
 * bearer token to the route, which checks the key.
 */
export function needsSession(rule: AccessRule, request: Request): boolean {
  if (takesApiKey(rule) && bearerToken(request) !== null) return false;
  return rule.who === 'signedIn' || rule.who === 'member' || rule.who === 'instanceAdmin';
}

/** Whether a session-less request with the connection's API key may call the route too. */
export function takesApiKey(rule: AccessRule): boolean {
  return rule.who === 'member' && rule.on === 'connection' && rule.orApiKey === true;
}

/** Who may call a route, in words: the OpenAPI document and docs/security.md's matrix say it so. */
export function describeRule(rule: AccessRule): string {
  switch (rule.who) {
    case 'anyone':
      return 'anyone';
    case 'apiKey':
      return "a connection's API key";
    case 'metricsToken':
      return 'the METRICS_TOKEN';
    case 'signedIn':
      return 'any signed-in user';
    case 'instanceAdmin':
      return 'the instance admin';
    case 'member': {
      const where = { connection: "the connection's team", bodyTeam: 'the team named by `teamId`', pathTeam: 'the team', anyTeam: 'any team', view: "the view's team" }[rule.on];
      const orElse = rule.on === 'pathTeam' || rule.on === 'anyTeam' ? ', or the instance admin' : takesApiKey(rule) ? ", or the connection's API key" : '';
      return `${rule.role} of ${where}${orElse}`;
    }
  }
}

/** The refusals a rule's checks can answer, for the OpenAPI document (404: what the caller may not see is not found). */
export function refusalsOf(rule: AccessRule): Array<'FORBIDDEN' | 'NOT_FOUND'> {
  if (rule.who === 'instanceAdmin') return ['FORBIDDEN'];
  if (rule.who !== 'member') return [];
  if ((rule.on === 'connection' || rule.on === 'view') && rule.role === 'viewer') return [];
  return rule.on === 'anyTeam' ? ['FORBIDDEN'] : ['FORBIDDEN', 'NOT_FOUND'];
}
