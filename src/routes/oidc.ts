/**
 * Single sign-on with OpenID Connect (src/sso/oidc-client.ts for the protocol,
 * actors/services/sso-service.ts for users and teams): `start` sends the browser to the
 * provider; `callback` finishes there, signs the user in with the same session cookie as
 * a password sign-in and sends them on, or sends them to the sign-in page with the reason
 * (`?sso=<code>&reason=...`), or to the no-access page when their groups give them no
 * team. Both are browser navigations, answered with redirects. `methods` tells the
 * sign-in page which ways to sign in there are.
 */
import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import type { AppDeps } from '../app-deps.ts';
import { noteAuditActor, noteAuditRefusal } from '../http/audit-trail.ts';
import { cookieSecure, setSignInCookies, type CookieJar } from '../http/session-cookies.ts';
import { publicAddress } from '../http/public-address.ts';
import { model, validQuery } from '../http/validate.ts';
import { SSO_STATE_COOKIE, SSO_STATE_TTL_MS, SsoRefusal } from '../sso/oidc-client.ts';

export const SsoStartParams = model(Type.Object({ next: Type.Optional(Type.String({ maxLength: 2_000, description: 'the page to open afterwards (a path of this site)' })) }));

const CALLBACK_PATH = '/api/auth/oidc/callback';

/** Only a path of this site: never another origin (an open redirect). */
function safeNext(next: string | undefined): string {
  return next !== undefined && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/jobs';
}

interface Answer {
  status?: number | string;
  headers: Record<string, string | number>;
}

/** A redirect through Elysia's `set`, so the cookies set beside it go out with it. */
function redirect(set: Answer, location: string): string {
  set.status = 302;
  set.headers.location = location;
  set.headers['cache-control'] = 'no-store';
  return '';
}

export function oidcRoutes(deps: AppDeps) {
  const { accounts, config, sso } = deps;
  const passwordSignIn = config.passwordSignIn ?? true;
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration
  return new Elysia({ name: 'oidc' })
    .get('/api/auth/methods', () => ({ password: passwordSignIn, sso: sso !== undefined }))
    .get('/api/auth/oidc/start', async ({ request, server, query, cookie, set }) => {
      if (sso === undefined) throw new DomainError('NOT_FOUND', 'single sign-on is not set up here (OIDC_ISSUER)');
      const { next } = validQuery(SsoStartParams, query);
      const started = await sso.client.start(publicAddress(CALLBACK_PATH, request, server, config), safeNext(next)).catch((error: unknown) => {
        if (error instanceof SsoRefusal) throw new DomainError('SERVICE_UNAVAILABLE', error.message);
        throw error;
      });
      // Lax: the provider's redirect back is a top-level navigation from another site, which must carry it
      cookie[SSO_STATE_COOKIE]!.set({ value: started.cookie, httpOnly: true, sameSite: 'lax', path: CALLBACK_PATH, secure: cookieSecure(request, server, config), maxAge: SSO_STATE_TTL_MS / 1000 });
      return redirect(set, started.location);
    })
    .get(CALLBACK_PATH, async ({ request, server, cookie, set }) => {
      const presented = cookie[SSO_STATE_COOKIE]?.value;
      cookie[SSO_STATE_COOKIE]!.remove();
      if (sso === undefined) throw new DomainError('NOT_FOUND', 'single sign-on is not set up here (OIDC_ISSUER)');
      try {
        const { identity, next } = await sso.client.finish(new URL(request.url), typeof presented === 'string' ? presented : undefined, publicAddress(CALLBACK_PATH, request, server, config));
        noteAuditActor(request, null, identity.email ?? identity.subject);
        const outcome = await sso.service.signIn(identity, sso.groupMap);
        if (outcome.kind === 'no-access') {
          noteAuditRefusal(request, 'denied', `NO_ACCESS: ${outcome.reason}`);
          return redirect(set, '/no-access');
        }
        const signedIn = await accounts.startSession(outcome.user);
        noteAuditActor(request, outcome.user.id, outcome.user.email);
        setSignInCookies(cookie as CookieJar, signedIn, accounts.deviceTrustMs, request, server, config);
        return redirect(set, next);
      } catch (error) {
        if (!(error instanceof SsoRefusal) && !(error instanceof DomainError && error.code === 'FORBIDDEN')) throw error;
        const code = error instanceof SsoRefusal ? error.code : 'refused';
        noteAuditRefusal(request, 'denied', `SSO_${code.toUpperCase()}: ${error.message}`);
        return redirect(set, `/signin?sso=${code}&reason=${encodeURIComponent(error.message.slice(0, 300))}`);
      }
    });
}
