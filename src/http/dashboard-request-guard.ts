/**
 * Cross-site request defences for everything a session cookie can authorize, in one
 * place and before the body is parsed. A mutating request that carries the session
 * cookie, and every login and logout, must:
 *
 * 1. be JSON (`Content-Type: application/json`, or no body at all): a cross-site page can
 *    send form, multipart and text bodies without asking, but JSON needs a CORS preflight
 *    this service never grants. Otherwise 415.
 * 2. come from the service's own origin: a present `Origin` must name our scheme, host and
 *    port (as the client addressed them; forwarded host and proto only from a trusted
 *    proxy): `https://host` is not the origin of a plain-HTTP service, nor the reverse.
 *    Without `Origin`, `Sec-Fetch-Site` (sent by current browsers) must be `same-origin`
 *    or `none`. With neither header the request is not from a browser page (curl,
 *    scripts): browsers send `Origin` on every cross-origin POST, so there is no
 *    cross-site request to refuse. Otherwise 403.
 *
 * Paths are judged as the router matches them: Elysia answers `/api/auth/login/` with the
 * login route, so the trailing slash does not take a request out of the guard.
 *
 * The SameSite=Lax session cookie is a third layer: browsers do not attach it to
 * cross-site POSTs at all.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import type { Config } from '../config.ts';
import { requestedOrigin, type PeerSource } from './client-address.ts';
import { SESSION_COOKIE } from './dashboard-auth.ts';
import { isJsonContentType, unsupportedMediaType } from './read-body.ts';
import { requestPath, routePath } from './request-path.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Reached before a session exists, so they are guarded whether or not a cookie is sent (login CSRF: a password link signs in too). */
const SESSION_ROUTES = new Set(['/api/auth/login', '/api/auth/logout', '/api/auth/set-password']);
const SAME_ORIGIN_FETCH_SITES = new Set(['same-origin', 'none']);
const SESSION_COOKIE_PATTERN = new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=`);

type GuardConfig = Pick<Config, 'trustedProxies'>;

export function dashboardRequestGuard(config: GuardConfig) {
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration, and the checks are the same run twice
  return new Elysia({ name: 'dashboard-request-guard' }).onRequest(({ request, server }) => {
    if (SAFE_METHODS.has(request.method)) return;
    // Stryker disable next-line StringLiteral: any fallback without "session=" answers the same
    const carriesSession = SESSION_COOKIE_PATTERN.test(request.headers.get('cookie') ?? '');
    // judged as the router matches: `/api/auth/login/` is login too
    if (!carriesSession && !SESSION_ROUTES.has(routePath(requestPath(request)))) return;
    requireJson(request);
    requireSameOrigin(request, server, config);
  });
}

/** Like the body reader's rule, but a request with no body at all needs no type. */
function requireJson(request: Request): void {
  const contentType = request.headers.get('content-type');
  // Stryker disable next-line StringLiteral: Number('') is 0 as well
  const hasBody = request.body !== null || Number(request.headers.get('content-length') ?? '0') > 0 || request.headers.has('transfer-encoding');
  if (contentType === null ? !hasBody : isJsonContentType(contentType)) return;
  throw unsupportedMediaType(contentType ?? '');
}

export function requireSameOrigin(request: Request, server: PeerSource | null | undefined, config: GuardConfig): void {
  const origin = request.headers.get('origin');
  if (origin === null) {
    const fetchSite = request.headers.get('sec-fetch-site');
    if (fetchSite === null || SAME_ORIGIN_FETCH_SITES.has(fetchSite.toLowerCase())) return;
    throw new DomainError('FORBIDDEN', `cross-site request refused (Sec-Fetch-Site: ${fetchSite})`);
  }
  const own = requestedOrigin(request, server, config);
  const claimed = originOf(origin);
  if (claimed === null || claimed !== originOf(`${own.https ? 'https' : 'http'}://${own.host}`)) {
    throw new DomainError('FORBIDDEN', 'cross-origin request refused');
  }
}

/**
 * Scheme, host and port in one comparable form (default ports dropped, host lowercased),
 * or null for what does not parse: `null` (sandboxed frames, some redirects), garbage.
 * Other schemes (`file:`, `ftp:`) parse but never equal our own http(s) origin.
 */
function originOf(text: string): string | null {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}`;
  } catch {
    return null;
  }
}
