import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { clientAddress, requestedOrigin } from '../http/client-address.ts';
import { dashboardUser, SESSION_COOKIE } from '../http/dashboard-auth.ts';
import { model, validBody } from '../http/validate.ts';
import { NOT_OBSERVED } from '../metrics/service-observer.ts';
import { publicUser } from '../../actors/services/account-service.ts';
import { DEVICE_COOKIE } from '../../actors/accounts/device-cookie.ts';

export const LoginBody = model(
  Type.Object({
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  }),
);

/**
 * Login sets the session cookie and the device cookie (which lets this browser past a
 * distributed guesser next time, see actors/accounts/device-cookie.ts); logout clears the
 * session cookie only: the device stays known. Me tells who is logged in. JSON and
 * origin: dashboard-request-guard.
 */
export function authRoutes(deps: AppDeps) {
  const { accounts, connections, config } = deps;
  const body = bodyReader(deps);
  const observer = deps.metrics?.service ?? NOT_OBSERVED;
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration, and this plugin is registered once
  return new Elysia({ name: 'auth' })
    .post('/api/auth/login', async ({ cookie, request, server }) => {
      const { email, password } = validBody(LoginBody, await body.json(request, FORM_BODY_BYTES_MAX));
      const presented = cookie[DEVICE_COOKIE]?.value;
      const address = clientAddress(request, server, config);
      const { token, user, deviceCookie } = await accounts.login(email, password, address, typeof presented === 'string' ? presented : undefined).catch((error: unknown) => {
        observer.loginRefused(error);
        throw error;
      });
      const secure = config.cookieSecure === 'true' || (config.cookieSecure === 'auto' && requestedOrigin(request, server, config).https);
      cookie[SESSION_COOKIE]!.set({ value: token, httpOnly: true, sameSite: 'lax', path: '/', secure, maxAge: Math.floor(config.sessionTtlMs / 1000) });
      // Sent only to the auth routes (login with or without a trailing slash), never cross-site.
      cookie[DEVICE_COOKIE]!.set({ value: deviceCookie, httpOnly: true, sameSite: 'strict', path: '/api/auth', secure, maxAge: Math.floor(accounts.deviceTrustMs / 1000) });
      return { user: publicUser(user) };
    },
    // Stryker disable next-line ObjectLiteral,StringLiteral: Elysia parses a body only for handlers that use `body`, which this one does not; 'none' says so
    { parse: 'none' })
    .post('/api/auth/logout', async ({ cookie, set }) => {
      // Stryker disable next-line OptionalChaining: Elysia's cookie jar has an entry for every name
      const token = cookie[SESSION_COOKIE]?.value;
      // Stryker disable next-line ConditionalExpression,StringLiteral: an empty token would find no session and record nothing either; the check only skips the lookup
      if (typeof token === 'string' && token !== '') await accounts.logout(token);
      cookie[SESSION_COOKIE]!.remove();
      set.status = 204;
    })
    .get('/api/auth/me', ({ cookie, request }) => {
      const user = dashboardUser(accounts, { request, cookie });
      return { user: publicUser(user), connections: connections.list(user) };
    });
}
