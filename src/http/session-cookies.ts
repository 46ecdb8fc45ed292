/**
 * The cookies a sign-in sets (password, password link or single sign-on alike): the
 * session cookie, and the device cookie that lets this browser past a distributed guesser
 * next time (actors/accounts/device-cookie.ts). Secure when the request is HTTPS (or
 * COOKIE_SECURE says so).
 */
import { DEVICE_COOKIE } from '../../actors/accounts/device-cookie.ts';
import type { Config } from '../config.ts';
import { requestedOrigin, type PeerSource } from './client-address.ts';
import { SESSION_COOKIE } from './dashboard-auth.ts';

export interface CookieJar {
  [name: string]: { set(options: Record<string, unknown>): unknown } | undefined;
}

export interface SignedIn {
  token: string;
  deviceCookie: string;
}

export function setSignInCookies(
  cookie: CookieJar,
  signedIn: SignedIn,
  deviceTrustMs: number,
  request: Request,
  server: PeerSource | null | undefined,
  config: Pick<Config, 'cookieSecure' | 'sessionTtlMs' | 'trustedProxies'>,
): void {
  const secure = cookieSecure(request, server, config);
  cookie[SESSION_COOKIE]!.set({ value: signedIn.token, httpOnly: true, sameSite: 'lax', path: '/', secure, maxAge: Math.floor(config.sessionTtlMs / 1000) });
  // Sent only to the auth routes (login with or without a trailing slash), never cross-site.
  cookie[DEVICE_COOKIE]!.set({ value: signedIn.deviceCookie, httpOnly: true, sameSite: 'strict', path: '/api/auth', secure, maxAge: Math.floor(deviceTrustMs / 1000) });
}

export function cookieSecure(request: Request, server: PeerSource | null | undefined, config: Pick<Config, 'cookieSecure' | 'trustedProxies'>): boolean {
  return config.cookieSecure === 'true' || (config.cookieSecure === 'auto' && requestedOrigin(request, server, config).https);
}
