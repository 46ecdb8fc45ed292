/**
 * Checks and headers every request and response gets at the edge (README "Security" >
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

// host = IP-literal / IPv4 / reg-name, then an optional port (RFC 3986 3.2.2-3.2.3)
const VALID_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d{0,5})?$/;

export function edgeHeaders() {
  return new Elysia({ name: 'edge-headers' }).onRequest(({ request, set }) => {
    set.headers['x-content-type-options'] = 'nosniff';
    if (requestPath(request).startsWith('/api/')) set.headers['cache-control'] = 'no-store';
    const host = request.headers.get('host');
    if (host !== null && !VALID_HOST.test(host)) {
      // The message does not repeat the header: no answer of ours reflects Host.
      throw new DomainError('VALIDATION_ERROR', 'the Host header is malformed', { host: ['must be a host name or address, with an optional port'] });
    }
  });
}
