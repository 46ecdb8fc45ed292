import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { clientAddress } from '../http/client-address.ts';
import { SESSION_COOKIE } from '../http/dashboard-auth.ts';
import { accessOf, sessionKeyOf } from '../http/access-guard.ts';
import { setSignInCookies, type CookieJar } from '../http/session-cookies.ts';
import { noteAuditActor } from '../http/audit-trail.ts';
import { model, validBody } from '../http/validate.ts';
import { NOT_OBSERVED } from '../metrics/service-observer.ts';
import { publicUser } from '../../actors/services/account-service.ts';
import { DEVICE_COOKIE } from '../../actors/accounts/device-cookie.ts';
import { DomainError } from '../../actors/domain-error.ts';

export const LoginBody = model(
  Type.Object({
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  }),
);

export const ChangePasswordBody = model(
  Type.Object({
    currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
    newPassword: Type.String({ minLength: 1, maxLength: 1024, description: '12 to 256 characters' }),
  }),
);

export const SetPasswordBody = model(
  Type.Object({
    token: Type.String({ minLength: 1, maxLength: 200, description: 'the token of an invitation or reset link (after `#token=` in its address)' }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: '12 to 256 characters' }),
  }),
);

/**
 * Login sets the session cookie and the device cookie (which lets this browser past a
 * distributed guesser next time, see actors/accounts/device-cookie.ts); logout clears the
 * session cookie only: the device stays known. Me tells who is logged in. A user changes
 * their own password (their other sessions end); a password link (an invitation or a
 * reset) sets one and signs in. JSON and origin: dashboard-request-guard.
 */
export function authRoutes(deps: AppDeps) {
  const { accounts, connections, teams, config } = deps;
  const body = bodyReader(deps);
  const observer = deps.metrics?.service ?? NOT_OBSERVED;
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration, and this plugin is registered once
  return new Elysia({ name: 'auth' })
    .post('/api/auth/login', async ({ cookie, request, server }) => {
      if (config.passwordSignIn === false) throw new DomainError('FORBIDDEN', 'password sign-in is turned off here: sign in with SSO');
      const { email, password } = validBody(LoginBody, await body.json(request, FORM_BODY_BYTES_MAX));
      noteAuditActor(request, null, email);
      const presented = cookie[DEVICE_COOKIE]?.value;
      const address = clientAddress(request, server, config);
      const { token, user, deviceCookie } = await accounts.login(email, password, address, typeof presented === 'string' ? presented : undefined).catch((error: unknown) => {
        observer.loginRefused(error);
        throw error;
      });
      noteAuditActor(request, user.id, user.email);
      setSignInCookies(cookie as CookieJar, { token, deviceCookie }, accounts.deviceTrustMs, request, server, config);
      return { user: publicUser(user) };
    },
    // Stryker disable next-line ObjectLiteral,StringLiteral: Elysia parses a body only for handlers that use `body`, which this one does not; 'none' says so
    { parse: 'none' })
    .post(
      '/api/auth/password',
      async ({ request, server, set }) => {
        const { currentPassword, newPassword } = validBody(ChangePasswordBody, await body.json(request, FORM_BODY_BYTES_MAX));
        const access = accessOf({ request });
        await accounts.changePassword(access.user, sessionKeyOf({ request }), currentPassword, newPassword, clientAddress(request, server, config));
        set.status = 204;
      },
      { parse: 'none' },
    )
    .post(
      '/api/auth/set-password',
      async ({ cookie, request, server }) => {
        const { token, password } = validBody(SetPasswordBody, await body.json(request, FORM_BODY_BYTES_MAX));
        const signedIn = await accounts.setPasswordWithLink(token, password);
        noteAuditActor(request, signedIn.user.id, signedIn.user.email);
        setSignInCookies(cookie as CookieJar, signedIn, accounts.deviceTrustMs, request, server, config);
        return { user: publicUser(signedIn.user) };
      },
      { parse: 'none' },
    )
    .post('/api/auth/logout', async ({ cookie, request, set }) => {
      // Stryker disable next-line OptionalChaining: Elysia's cookie jar has an entry for every name
      const token = cookie[SESSION_COOKIE]?.value;
      // Stryker disable next-line ConditionalExpression,StringLiteral: an empty token would find no session and record nothing either; the check only skips the lookup
      const user = typeof token === 'string' && token !== '' ? await accounts.logout(token) : undefined;
      if (user !== undefined) noteAuditActor(request, user.id, user.email);
      cookie[SESSION_COOKIE]!.remove();
      set.status = 204;
    })
    .get('/api/auth/me', ({ request }) => {
      const access = accessOf({ request });
      return { user: publicUser(access.user), teams: teams.list(access), connections: connections.list(access) };
    });
}
