/**
 * Checks and headers every request and response gets at the edge (docs/security.md,
 * "HTTP edge"):
 * - a malformed `Host` is a 400 (RFC 9112 3.2): Bun builds `request.url` from it, and
 *   nothing should run on a URL that does not parse;
 * - `X-Content-Type-Options: nosniff` on every response, so no browser reads a JSON error
 *   or an API key as HTML or script;
 * - `Cache-Control: no-store` on every `/api/*` response: they carry API keys, sessions
 *   and tenant data, which no shared or browser cache should keep.
 * Headers set here are merged by Elysia into every answer, including error envelopes and
 * Responses that routes build themselves.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { requestPath } from './request-path.ts';

// a DNS name or IPv4 address, or a bracketed IPv6 literal, then an optional port; and what
// the URL parser accepts, so that code reading `new URL(request.url)` later cannot throw
const HOST_CHARACTERS = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d{1,5})?$/;
const isValidHost = (host: string): boolean => HOST_CHARACTERS.test(host) && URL.canParse(`http://${host}/`);

export function edgeHeaders() {
  return new Elysia({ name: 'edge-headers' }).onRequest(({ request, set }) => {
    set.headers['x-content-type-options'] = 'nosniff';
    if (requestPath(request).startsWith('/api/')) set.headers['cache-control'] = 'no-store';
    const host = request.headers.get('host');
    if (host !== null && !isValidHost(host)) {
      // The message does not repeat the header: no answer of ours reflects Host.
      throw new DomainError('VALIDATION_ERROR', 'the Host header is malformed', { host: ['must be a host name or address, with an optional port'] });
    }
  });
}
