/**
 * The HTTP edge (README "Security" > "HTTP edge"): what no client header can change in our
 * answers, the headers every answer carries, and strict query numbers.
 */
import { describe, expect, test } from 'bun:test';
import { BASE, testApp } from '../support/test-app.ts';

const API_PATHS = ['/api/health', '/api/nope', '/api/jobs', '/api/connections'];

describe('the Host header', () => {
  test('a malformed Host is a 400 envelope that does not repeat it, on every kind of route', async () => {
    const t = await testApp();
    for (const path of ['/api/health', '/nope', '/api/jobs', '/docs/errors']) {
      const response = await t.request('GET', path, { headers: { host: '[<script>' } });
      expect(response.status).toBe(400);
      expect(response.json.error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'the Host header is malformed',
        docs_url: '/docs/errors#VALIDATION_ERROR',
        details: { host: ['must be a host name or address, with an optional port'] },
      });
    }
  });

  test('ordinary hosts pass: names, IPv4, IPv6 literals, with ports', async () => {
    const t = await testApp();
    for (const host of ['localhost', 'localhost:3000', 'jobs.example.com', '10.0.0.5:8080', '[::1]:3000', '[2001:db8::1]']) {
      expect((await t.request('GET', '/api/health', { headers: { host } })).status).toBe(200);
    }
  });

  test('docs_url is relative without PUBLIC_URL and never names the Host the client sent', async () => {
    const t = await testApp();
    const response = await t.request('GET', '/api/nope', { headers: { host: 'evil.example' } });
    expect(response.json.error.docs_url).toBe('/docs/errors#NOT_FOUND');
    expect(response.text).not.toContain('evil.example');
  });

  test('PUBLIC_URL makes docs_url absolute', async () => {
    const t = await testApp({ publicUrl: 'https://jobs.example.com' });
    const response = await t.request('GET', '/api/nope', { headers: { host: 'evil.example' } });
    expect(response.json.error.docs_url).toBe('https://jobs.example.com/docs/errors#NOT_FOUND');
  });
});

describe('headers on every answer', () => {
  test('nosniff on every response; no-store on every /api/* response', async () => {
    const t = await testApp();
    const cookie = await t.login();
    for (const path of [...API_PATHS, '/docs/errors', '/nope']) {
      const response = await t.app.handle(new Request(BASE + path, { headers: { cookie } }));
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      if (path.startsWith('/api/')) expect(response.headers.get('cache-control')).toBe('no-store');
    }
    // the answers that carry a session and an API key
    const login = await t.app.handle(
      new Request(BASE + '/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.com', password: 'correct horse battery' }) }),
    );
    expect(login.headers.get('set-cookie')).toContain('session=');
    expect(login.headers.get('cache-control')).toBe('no-store');
    const created = await t.request('POST', '/api/connections', { body: { name: 'prod' }, headers: { cookie } });
    expect(created.json.apiKey).toStartWith('sk_');
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
