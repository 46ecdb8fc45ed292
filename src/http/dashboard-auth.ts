/**
 * Dashboard requests: the session cookie names the user. What a cookie-authenticated
 * request must look like to be believed (JSON, own origin) is enforced once, before any
 * route runs, by `dashboard-request-guard.ts`.
 */
import type { User } from '../../actors/accounts/account-records.ts';
import type { AccountService } from '../../actors/services/account-service.ts';

export const SESSION_COOKIE = 'session';

/** The parts of an Elysia context a dashboard route authenticates with. */
export interface SessionContext {
  request: Request;
  cookie: Record<string, { value: unknown } | undefined>;
}

/** The user and the key of the session that authenticated them (a live stream ends with it). */
export function dashboardSession(accounts: AccountService, { cookie }: SessionContext): { user: User; sessionKey: string } {
  const token = cookie[SESSION_COOKIE]?.value;
  return accounts.requireSession(typeof token === 'string' ? token : undefined);
}
