/**
 * Dashboard requests: the session cookie names the user; mutating requests must come
 * from the service's own origin (a foreign `Origin` is a cross-site request: 403).
 */
import type { User } from '../../actors/accounts/account-records.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { AccountService } from '../../actors/services/account-service.ts';

export const SESSION_COOKIE = 'session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function requireSameOrigin(request: Request): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.get('origin');
  if (origin === null) return; // not a browser cross-site request (curl, SDKs, same-origin GET forms)
  const ownHost = request.headers.get('x-forwarded-host') ?? request.headers.get('host') ?? new URL(request.url).host;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = '';
  }
  if (originHost !== ownHost) throw new DomainError('FORBIDDEN', 'cross-origin request refused');
}

/** The parts of an Elysia context a dashboard route authenticates with. */
export interface SessionContext {
  request: Request;
  cookie: Record<string, { value: unknown } | undefined>;
}

export function dashboardUser(accounts: AccountService, { request, cookie }: SessionContext): User {
  requireSameOrigin(request);
  const token = cookie[SESSION_COOKIE]?.value;
  return accounts.requireUser(typeof token === 'string' ? token : undefined);
}

export function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
}
