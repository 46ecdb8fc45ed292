/**
 * The cross-site guard on its own, in front of a route that only answers "ok": which
 * requests it lets through, which it refuses with 415 or 403, and the exact messages.
 * (cross-site.test.ts checks the same rules through the real app, with logins.)
 */
import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { errorBoundary } from '../../src/http/error-boundary.ts';
import { dashboardRequestGuard, requireSameOrigin } from '../../src/http/dashboard-request-guard.ts';
import { TrustedProxies } from '../../src/http/trusted-proxies.ts';
import { routePath } from '../../src/http/request-path.ts';
import { DomainError } from '../../actors/domain-error.ts';

const OWN = 'http://localhost:3000';
const SESSION = { cookie: 'session=abc' };
const JSON_TYPE = { 'content-type': 'application/json' };
const config = { trustedProxies: TrustedProxies.parse('') };

function app() {
  const routes = new Elysia()
    .use(errorBoundary(() => {}, null))
    .use(dashboardRequestGuard(config))
    .get('/api/connections', () => 'ok')
    .post('/api/connections', () => 'ok', { parse: 'none' })
    .delete('/api/connections/:id', () => 'ok')
    .post('/api/auth/login', () => 'ok', { parse: 'none' })
    .post('/api/auth/logout', () => 'ok', { parse: 'none' })
    .post('/api/ingest', () => 'ok', { parse: 'none' });
  return async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const response = await routes.handle(new Request(OWN + path, { method, headers, body }));
    const text = await response.text();
    return { status: response.status, error: response.status === 200 ? null : (JSON.parse(text).error as { code: string; message: string }) };
  };
}

describe('which requests the guard judges', () => {
  test('safe methods pass whatever they carry', async () => {
    const send = app();
    const anything = { ...SESSION, origin: 'https://evil.example', 'content-type': 'text/plain' };
    expect((await send('GET', '/api/connections', anything)).status).toBe(200);
    for (const method of ['HEAD', 'OPTIONS']) expect([403, 415]).not.toContain((await send(method, '/api/connections', anything)).status);
  });

  test('a mutating request without the session cookie passes (API keys cannot be sent by a foreign page), except login and logout', async () => {
    const send = app();
    const foreign = { origin: 'https://evil.example', 'content-type': 'text/plain' };
    expect((await send('POST', '/api/ingest', foreign, 'x')).status).toBe(200);
    expect((await send('POST', '/api/ingest', { ...foreign, cookie: 'notsession=abc; xsession=1' }, 'x')).status).toBe(200);
    expect((await send('POST', '/api/auth/login', foreign, 'x')).status).toBe(415);
    expect((await send('POST', '/api/auth/logout', { origin: 'https://evil.example' })).status).toBe(403);
    expect((await send('POST', '/api/auth/login?next=/', { ...JSON_TYPE, origin: 'https://evil.example' }, '{}')).status).toBe(403);
  });

  test('the session cookie is recognized anywhere in the Cookie header', async () => {
    const send = app();
    for (const cookie of ['session=abc', 'a=1; session=abc', 'a=1;session=abc']) {
      expect((await send('DELETE', '/api/connections/x', { cookie, origin: 'https://evil.example' })).status).toBe(403);
    }
  });
});

describe('JSON only', () => {
  test('a body that is not JSON is 415 with the type it had; JSON with parameters and no body at all pass', async () => {
    const send = app();
    const refused = await send('POST', '/api/connections', { ...SESSION, 'content-type': 'text/plain' }, '{}');
    expect(refused).toEqual({ status: 415, error: expect.objectContaining({ code: 'UNSUPPORTED_MEDIA_TYPE', message: "Content-Type must be application/json, got 'text/plain'" }) });
    const untyped = await send('POST', '/api/connections', SESSION, '{}');
    expect(untyped).toEqual({ status: 415, error: expect.objectContaining({ message: "Content-Type must be application/json, got 'none'" }) });
    expect((await send('POST', '/api/connections', { ...SESSION, 'content-type': 'application/json; charset=utf-8' }, '{}')).status).toBe(200);
    expect((await send('DELETE', '/api/connections/x', SESSION)).status).toBe(200);
  });

  test('a declared length or chunked transfer counts as a body even before it is read', async () => {
    const send = app();
    expect((await send('DELETE', '/api/connections/x', { ...SESSION, 'content-length': '2' })).status).toBe(415);
    expect((await send('DELETE', '/api/connections/x', { ...SESSION, 'transfer-encoding': 'chunked' })).status).toBe(415);
    expect((await send('DELETE', '/api/connections/x', { ...SESSION, 'content-length': '0' })).status).toBe(200);
  });
});

describe('own origin only', () => {
  test('a foreign, null or unparsable Origin is 403 "cross-origin request refused"; our own passes', async () => {
    const send = app();
    for (const origin of ['https://evil.example', 'http://localhost:3001', 'null', 'not a url']) {
      expect(await send('POST', '/api/connections', { ...SESSION, ...JSON_TYPE, origin }, '{}')).toEqual({
        status: 403,
        error: expect.objectContaining({ code: 'FORBIDDEN', message: 'cross-origin request refused' }),
      });
    }
    expect((await send('POST', '/api/connections', { ...SESSION, ...JSON_TYPE, origin: OWN }, '{}')).status).toBe(200);
  });

  test('an Origin that names no host is refused even when the Host header is empty too', async () => {
    const send = app();
    for (const origin of ['null', 'not a url']) {
      expect((await send('POST', '/api/connections', { ...SESSION, ...JSON_TYPE, origin, host: '' }, '{}')).status).toBe(403);
    }
  });

  test('without Origin, Sec-Fetch-Site decides (same-origin and none pass, in any case); without both it passes', async () => {
    const send = app();
    const site = (value: string) => send('POST', '/api/connections', { ...SESSION, ...JSON_TYPE, 'sec-fetch-site': value }, '{}');
    expect(await site('cross-site')).toEqual({
      status: 403,
      error: expect.objectContaining({ code: 'FORBIDDEN', message: 'cross-site request refused (Sec-Fetch-Site: cross-site)' }),
    });
    expect((await site('same-site')).status).toBe(403);
    expect((await site('same-origin')).status).toBe(200);
    expect((await site('Same-Origin')).status).toBe(200);
    expect((await site('none')).status).toBe(200);
    expect((await send('POST', '/api/connections', { ...SESSION, ...JSON_TYPE }, '{}')).status).toBe(200);
  });

  test('requireSameOrigin compares scheme, host and port with what the client addressed', () => {
    const check = (origin: string, url: string, headers: Record<string, string> = {}, server: { requestIP(): { address: string } } | null = null, proxies = config) => () =>
      requireSameOrigin(new Request(`${url}/api/connections`, { method: 'POST', headers: { origin, host: new URL(url).host, ...headers } }), server, proxies);
    expect(check('http://jobs.example.com', 'http://jobs.example.com')).not.toThrow();
    expect(check('http://jobs.example.com:8080', 'http://jobs.example.com:8080')).not.toThrow();
    expect(check('http://jobs.example.com', 'http://jobs.example.com:8080')).toThrow(DomainError);
    // the scheme counts: an https page is not the origin of a plain-HTTP service, nor the reverse
    expect(check('https://jobs.example.com', 'http://jobs.example.com')).toThrow(DomainError);
    expect(check('https://jobs.example.com:80', 'http://jobs.example.com:80')).toThrow(DomainError);
    expect(check('http://jobs.example.com', 'https://jobs.example.com')).toThrow(DomainError);
    expect(check('https://jobs.example.com', 'https://jobs.example.com')).not.toThrow();
    // default ports and case are one origin however they are written
    expect(check('http://JOBS.example.com', 'http://jobs.example.com:80')).not.toThrow();
    expect(check('https://jobs.example.com:443', 'https://jobs.example.com')).not.toThrow();
    // only http and https pages are origins at all
    expect(check('ftp://jobs.example.com', 'http://jobs.example.com')).toThrow(DomainError);
    // behind a trusted proxy its forwarded proto decides the scheme; from anyone else it is ignored
    const proxy = { requestIP: () => ({ address: '10.0.0.1' }) };
    const behindProxy = { trustedProxies: TrustedProxies.parse('10.0.0.1') };
    const forwardedHttps = { 'x-forwarded-proto': 'https' };
    expect(check('https://jobs.example.com', 'http://jobs.example.com', forwardedHttps, proxy, behindProxy)).not.toThrow();
    expect(check('http://jobs.example.com', 'http://jobs.example.com', forwardedHttps, proxy, behindProxy)).toThrow(DomainError);
    expect(check('https://jobs.example.com', 'http://jobs.example.com', forwardedHttps, proxy, config)).toThrow(DomainError);
  });
});

describe('a trailing slash names the same route', () => {
  test('login and logout with a trailing slash are judged like without one', async () => {
    const send = app();
    const foreign = { ...JSON_TYPE, origin: 'https://evil.example' };
    for (const path of ['/api/auth/login/', '/api/auth/logout/', '/api/auth/login//', '/api/auth/login/?next=/']) {
      expect((await send('POST', path, foreign, '{}')).status).toBe(403);
      expect((await send('POST', path, { origin: OWN, 'content-type': 'text/plain' }, '{}')).status).toBe(415);
    }
    expect((await send('POST', '/api/auth/login/', { ...JSON_TYPE, origin: OWN }, '{}')).status).toBe(200);
  });

  test('routePath drops trailing slashes and keeps the root', () => {
    expect(routePath('/api/auth/login/')).toBe('/api/auth/login');
    expect(routePath('/api/auth/login///')).toBe('/api/auth/login');
    expect(routePath('/api/auth/login')).toBe('/api/auth/login');
    expect(routePath('/')).toBe('/');
    expect(routePath('//')).toBe('/');
  });
});
