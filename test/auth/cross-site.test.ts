/**
 * Cookie-authenticated mutating requests and login/logout: JSON only (415 otherwise) and
 * the own origin only (403 otherwise), with forwarded headers believed only from a
 * trusted proxy.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { ADMIN, testApp } from '../support/test-app.ts';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('cross-site requests', () => {
  test('form, multipart, text and untyped bodies are 415 in the envelope on cookie routes, login and logout', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const form = new FormData();
    form.set('name', 'x');
    const bodies: Array<{ body: string | FormData | Blob; type?: string }> = [
      { body: 'name=x', type: 'application/x-www-form-urlencoded' },
      { body: form },
      { body: '{"name":"x"}', type: 'text/plain' },
      { body: new Blob(['{"name":"x"}']) },
    ];
    for (const path of ['/api/connections', '/api/users', '/api/auth/login', '/api/auth/logout', '/api/jobs/bulk/revoke']) {
      for (const { body, type } of bodies) {
        const headers: Record<string, string> = { cookie };
        if (type !== undefined) headers['content-type'] = type;
        const response = await t.app.handle(new Request('http://localhost:3000' + path, { method: 'POST', headers, body }));
        expect(response.status).toBe(415);
        const json = (await response.json()) as any;
        expect(json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
        expect(json.error.docs_url).toContain('UNSUPPORTED_MEDIA_TYPE');
      }
    }
    expect((await t.request('GET', '/api/connections', { headers: { cookie } })).json.data).toEqual([]);
    // a body-less mutation (no Content-Type) and JSON are fine
    expect((await t.request('POST', '/api/connections', { body: { name: 'json' }, headers: { cookie } })).status).toBe(201);
    expect((await t.request('POST', '/api/auth/logout', { headers: { cookie } })).status).toBe(204);
  });

  test('login from a foreign Origin is 403 (login CSRF), from the own origin 200', async () => {
    const t = await testApp();
    const foreign = await t.request('POST', '/api/auth/login', { body: ADMIN, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.json.error.code).toBe('FORBIDDEN');
    expect(foreign.headers.get('set-cookie')).toBeNull();
    const own = await t.request('POST', '/api/auth/login', { body: ADMIN, headers: { origin: 'http://localhost:3000' } });
    expect(own.status).toBe(200);
  });

  test('login with a trailing slash gets the same Origin check; an https Origin is not a plain-HTTP service', async () => {
    const t = await testApp();
    const foreign = await t.request('POST', '/api/auth/login/', { body: ADMIN, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('set-cookie')).toBeNull();
    const otherScheme = await t.request('POST', '/api/auth/login', { body: ADMIN, headers: { origin: 'https://localhost:3000' } });
    expect(otherScheme.status).toBe(403);
    expect((await t.request('POST', '/api/auth/login', { body: ADMIN, headers: { origin: 'http://localhost:3000' } })).status).toBe(200);
  });

  test('Origin null is refused; without Origin, Sec-Fetch-Site decides; without both (curl) it is allowed', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const create = (name: string, headers: Record<string, string>) => t.request('POST', '/api/connections', { body: { name }, headers: { cookie, ...headers } });
    expect((await create('a', { origin: 'null' })).status).toBe(403);
    expect((await create('b', { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await create('c', { 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect((await create('d', { 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await create('e', {})).status).toBe(201);
  });

  test('X-Forwarded-Host and Forwarded from an untrusted client do not make a foreign Origin ours', async () => {
    const t = await testApp();
    const cookie = await t.login();
    for (const forged of [{ 'x-forwarded-host': 'evil.example' }, { forwarded: 'host=evil.example;proto=https' }] as Array<Record<string, string>>) {
      const response = await t.request('POST', '/api/connections', { body: { name: 'x' }, headers: { cookie, origin: 'https://evil.example', ...forged } });
      expect(response.status).toBe(403);
    }
    // and X-Forwarded-Proto from an untrusted client does not make the cookie Secure
    const login = await t.request('POST', '/api/auth/login', { body: ADMIN, headers: { 'x-forwarded-proto': 'https' } });
    expect(login.headers.get('set-cookie')).not.toContain('Secure');
  });

  test('behind a trusted proxy the forwarded host is the own origin and forwarded https makes the cookie Secure', async () => {
    const t = await testApp({ trustedProxies: ['127.0.0.1'] });
    const server = t.serve();
    stops.push(server.stop);
    const proxied = { 'x-forwarded-host': 'jobs.example.com', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9', 'content-type': 'application/json' };
    const login = await fetch(server.baseUrl + '/api/auth/login', { method: 'POST', headers: { ...proxied, origin: 'https://jobs.example.com' }, body: JSON.stringify(ADMIN) });
    expect(login.status).toBe(200);
    expect(login.headers.get('set-cookie')).toContain('Secure');
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    let created = 0;
    const create = (origin: string, headers: Record<string, string>) =>
      fetch(server.baseUrl + '/api/connections', { method: 'POST', headers: { ...headers, cookie, origin }, body: JSON.stringify({ name: `connection ${created++}` }) });
    expect((await create('https://jobs.example.com', proxied)).status).toBe(201);
    expect((await create('https://evil.example', proxied)).status).toBe(403);
    const rfc7239 = { forwarded: 'for=203.0.113.9;host=jobs.example.com;proto=https', 'content-type': 'application/json' };
    expect((await create('https://jobs.example.com', rfc7239)).status).toBe(201);
  });
});
