/**
 * The audit trail: after a route whose rule names an audit action (access-rules.ts) has
 * answered, allowed, refused or failed, one entry per team or connection it acted on is
 * committed before the answer goes out (actors/audit/audit-log.ts). Who: the signed-in
 * user, or for the sign-in routes the email they named (`noteAuditActor`), or `api key`
 * for a change a route takes with a connection's API key instead of a session
 * (`noteAuditApiKey`: a deploy marker from a CI step, which the team's admins read beside
 * their members' changes). On what: the
 * target a handler noted (`noteAuditTarget`), else the route's `:userId` or `:id`, else the
 * connection or team it acted on. The teams and connections come from the request's
 * `Access`, which notes each one a check is asked about (a refused one too).
 *
 * Not recorded: routes without an audit action (reads, ingest, the agent's calls), and a
 * request nobody is known for (a bad API key included) (no session, no email named: an anonymous probe of a route
 * cannot fill the log). A sign-in route records its successes and refusals only, not a
 * malformed body or a throttled attempt.
 *
 * Registered before the error boundary: its error hook records, and the boundary answers.
 * A failure to write an entry is logged and never changes the answer.
 */
import { Elysia } from 'elysia';
import type { AuditEntry, AuditOutcome } from '../../actors/audit/audit-log.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { Engine } from '../../actors/engine.ts';
import { newId } from '../../actors/ids.ts';
import type { Config } from '../config.ts';
import { UI_PAGE_PATHS } from '../routes/ui.ts';
import type { AccessSubject } from '../../actors/accounts/access.ts';
import { grantedAccess } from './access-guard.ts';
import { ruleOf, type RouteRule } from './access-rules.ts';
import { clientAddress, type PeerSource } from './client-address.ts';
import { STATUS_OF } from './error-envelope.ts';

interface AuditNote {
  actor?: { userId: string | null; email: string };
  /** the team and connection of the API key a keyed request came with */
  keySubject?: AccessSubject;
  target?: string;
  /** a refusal answered with a redirect (single sign-on's callback): its outcome and why */
  refused?: { outcome: AuditOutcome; error: string };
}

const notes = new WeakMap<Request, AuditNote>();
/** an error's text is kept, within reason */
const ERROR_CHARS_MAX = 300;

function noteOf(request: Request): AuditNote {
  let note = notes.get(request);
  if (note === undefined) notes.set(request, (note = {}));
  return note;
}

/** Who a request that has no session acts as (a sign-in names an email; a successful one, its user). */
export function noteAuditActor(request: Request, userId: string | null, email: string): void {
  noteOf(request).actor = { userId, email: email.trim().toLowerCase().slice(0, 320) };
}

/** The actor `api key` beside the email of people, in the audit log. */
export const API_KEY_ACTOR = 'api key';

/** A request authenticated by the API key of `connectionId` (of `teamId`) rather than a session: the key is who acted. */
export function noteAuditApiKey(request: Request, teamId: string | null, connectionId: string): void {
  const note = noteOf(request);
  note.actor = { userId: null, email: API_KEY_ACTOR };
  note.keySubject = { teamId, connectionId };
}

/** A refusal the answer's status does not show (a redirect to a page that explains it). */
export function noteAuditRefusal(request: Request, outcome: AuditOutcome, error: string): void {
  noteOf(request).refused = { outcome, error: error.slice(0, ERROR_CHARS_MAX) };
}

/** What a request acted on, when its path does not say (a created user's email, how many jobs a bulk action named). */
export function noteAuditTarget(request: Request, target: string): void {
  noteOf(request).target = target;
}

interface Answered {
  request: Request;
  route: string | undefined;
  params: Record<string, string | undefined> | undefined;
  server: PeerSource | null;
  status: number;
  error: string | null;
}

export function auditTrail(engine: Engine, config: Pick<Config, 'trustedProxies'>, logError: (line: string) => void) {
  const record = async (answered: Answered): Promise<void> => {
    const rule = answered.route === undefined ? undefined : ruleOf(answered.request.method, answered.route, UI_PAGE_PATHS);
    if (rule?.audit === undefined) return;
    const entries = entriesOf(rule, answered, engine, config);
    try {
      await Promise.all(entries.map(({ entry, via }) => engine.commit({ t: 'audit.recorded', entry, ...(via === null ? {} : { connectionId: via }) })));
    } catch (error) {
      logError(`audit entry not written (${rule.audit.action} by ${entries[0]?.entry.email ?? 'nobody'}): ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration
  return new Elysia({ name: 'audit-trail' })
    .onAfterHandle({ as: 'global' }, async ({ request, route, params, set, server }) => {
      await record({ request, route, params: params as Answered['params'], server, status: typeof set.status === 'number' ? set.status : 200, error: null });
    })
    .onError({ as: 'global' }, async ({ request, route, params, error, code, server }) => {
      const status = error instanceof DomainError ? STATUS_OF[error.code] : code === 'VALIDATION' || code === 'PARSE' ? 400 : 500;
      const text = error instanceof DomainError ? `${error.code}: ${error.message}` : code === 'VALIDATION' || code === 'PARSE' ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR';
      await record({ request, route, params: params as Answered['params'], server: server ?? null, status, error: text.slice(0, ERROR_CHARS_MAX) });
    });
}

/** The entries of one answered request: one per connection a connection's change acted on, else one. */
function entriesOf(rule: RouteRule, answered: Answered, engine: Engine, config: Pick<Config, 'trustedProxies'>): Array<{ entry: AuditEntry; via: string | null }> {
  const { request, params, status } = answered;
  const note = notes.get(request);
  const outcome: AuditOutcome = note?.refused?.outcome ?? (status < 400 ? 'success' : status === 401 || status === 403 ? 'denied' : 'failed');
  const access = grantedAccess(request);
  const actor = access === undefined ? note?.actor : { userId: access.user.id, email: access.user.email };
  // nobody known, or a sign-in route's malformed or throttled attempt: nothing to tell
  if (actor === undefined || (access === undefined && outcome === 'failed')) return [];
  const subjects = access?.subjects.length ? access.subjects : [note?.keySubject ?? { teamId: null, connectionId: null }];
  const byConnection = rule.audit!.writes === 'connection' ? subjects.filter((subject) => subject.connectionId !== null) : [];
  const base = {
    atMs: engine.clock.nowMs(),
    userId: actor.userId,
    email: actor.email,
    address: clientAddress(request, answered.server, config),
    action: rule.audit!.action,
    outcome,
    status,
    error: note?.refused?.error ?? answered.error,
  };
  const target = (subject: { teamId: string | null; connectionId: string | null }) =>
    note?.target ?? params?.userId ?? params?.id ?? subject.connectionId ?? subject.teamId ?? null;
  if (byConnection.length > 0) {
    return byConnection.map((subject) => ({ entry: { id: newId(), ...base, target: target(subject), ...subject }, via: subject.connectionId }));
  }
  const [first] = subjects;
  return [{ entry: { id: newId(), ...base, target: target(first!), teamId: first!.teamId, connectionId: first!.connectionId }, via: null }];
}
