/**
 * The access guard: before any handler runs, the route's rule (access-rules.ts) is
 * looked up by the route Elysia matched; a route without one is refused (a bug, answered
 * 500 and logged, never served open). For a rule that needs a session it authenticates
 * (401), makes the request's `Access` (the user's teams and roles, actors/accounts/access.ts)
 * and checks what the rule can check before the body is read: the instance admin, a role in
 * the team of the path (which the instance admin manages as a team too), a role in some
 * team (403, or 404 for a team the user is not in).
 * Handlers read the `Access` with `accessOf`; roles on a connection are checked by the
 * services, which know the connection.
 */
import { Elysia } from 'elysia';
import { Access } from '../../actors/accounts/access.ts';
import { roleIncludes } from '../../actors/accounts/roles.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { Engine } from '../../actors/engine.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import { UI_PAGE_PATHS } from '../routes/ui.ts';
import { needsSession, ruleOf, type RouteRule } from './access-rules.ts';
import { dashboardSession, type SessionContext } from './dashboard-auth.ts';
import { connectionsInScope } from './read-scope.ts';

interface RequestAccess {
  access: Access;
  /** the key of the session that authenticated the request (a live stream ends with it) */
  sessionKey: string;
}

const granted = new WeakMap<Request, RequestAccess>();

/** The context a guarded handler is given: the route Elysia matched and its parameters. */
interface GuardContext extends SessionContext {
  route: string;
  params: Record<string, string | undefined>;
}

export function accessGuard(accounts: AccountService, engine: Engine) {
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration
  return new Elysia({ name: 'access-guard' }).onBeforeHandle({ as: 'global' }, ({ request, route, params, cookie }) => {
    // The context is destructured, never taken whole: Elysia reads a hook's parameters to
    // decide what to prepare, and a hook taking the whole context would make it parse every
    // route's body (routes read their bodies themselves, with caps: read-body.ts).
    const rule = routeRule(request, route);
    if (!needsSession(rule, request)) return;
    const { user, sessionKey } = dashboardSession(accounts, { request, cookie } as SessionContext);
    const access = new Access(user, engine.accounts, connectionsInScope(request));
    granted.set(request, { access, sessionKey });
    checkRule(rule, access, params as GuardContext['params']);
  });
}

/** The rule of the request's route; a route without one is a bug, refused whatever it is. */
export function routeRule(request: Request, route: string): RouteRule {
  const rule = ruleOf(request.method, route, UI_PAGE_PATHS);
  if (rule === undefined) throw new Error(`no access rule for ${request.method} ${route}: refused (add it to src/http/access-rules.ts)`);
  return rule;
}

function checkRule(rule: RouteRule, access: Access, params: GuardContext['params']): void {
  if (rule.who === 'instanceAdmin') access.requireInstanceAdmin(rule.doing);
  if (rule.who !== 'member') return;
  if (rule.on === 'pathTeam') access.manageTeam(params.id ?? '', rule.role, rule.doing);
  if (rule.on === 'anyTeam' && !access.isInstanceAdmin && !access.teams().some((grant) => roleIncludes(grant.role, rule.role))) {
    throw new DomainError('FORBIDDEN', `to ${rule.doing} you need the ${rule.role} role in a team`);
  }
}

/** The `Access` the guard made for this request; only for routes whose rule needs a session. */
export function accessOf(context: { request: Request }): Access {
  return requestAccess(context.request).access;
}

/** The key of the session that authenticated this request. */
export function sessionKeyOf(context: { request: Request }): string {
  return requestAccess(context.request).sessionKey;
}

/** The request's `Access` when it was signed in (the audit log reads it); undefined for others. */
export function grantedAccess(request: Request): Access | undefined {
  return granted.get(request)?.access;
}

function requestAccess(request: Request): RequestAccess {
  const found = granted.get(request);
  if (found === undefined) throw new Error('no access was granted to this request: its route rule needs no session');
  return found;
}
