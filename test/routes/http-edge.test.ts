/**
 * The HTTP edge (docs/security.md, "HTTP edge"): what no client header can change in our
 * answers, the headers every answer carries, and strict query numbers.
 */
import { describe, expect, test } from 'bun:test';
import { BASE, testApp } from '../support/test-app.ts';

const API_PATHS = ['/api/health', '/api/nope', '/api/jobs', '/api/connections'];

describe('the Host header', () => {
  test('a malformed Host is a 400 envelope that does not repeat it, on every kind of route', async () => {
    const t = await testApp();
    const hosts = ['[<script>', '[', 'a%zz', '[1:2]', 'localhost:99999', 'a b', 'a/b', 'user@host', 'host:', ''];
    for (const [index, path] of ['/api/health', '/nope', '/api/jobs', '/docs/errors', '/api/auth/login', '/api/connections'].entries()) for (const host of hosts) {
      const response = await t.request(index === 4 ? 'POST' : 'GET', path, { headers: { host } });
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

describe('query numbers are plain decimal digits', () => {
  const routes = [
    ['/api/jobs', 'limit'],
    ['/api/queues', 'limit'],
    ['/api/queues', 'page'],
    ['/api/workers', 'page'],
    ['/api/agent/commands', 'limit'],
  ] as const;

  test('1e2, 0x10, +5, " 5", "5 ", 5.0, 0b1, Infinity are 400 naming the parameter; 5 and 05 pass', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const { apiKey } = await t.createConnection(cookie, 'prod');
    const headers = { cookie, authorization: `Bearer ${apiKey}` };
    for (const [path, name] of routes) {
      for (const lenient of ['1e2', '0x10', '+5', ' 5', '5 ', '5.0', '0b1', 'Infinity', '']) {
        const response = await t.request('GET', `${path}?${name}=${encodeURIComponent(lenient)}`, { headers });
        expect([path, name, lenient, response.status]).toEqual([path, name, lenient, 400]);
        expect(response.json.error.details[name]).toEqual(['must be a whole number written in decimal digits']);
      }
      for (const plain of ['5', '05']) {
        const response = await t.request('GET', `${path}?${name}=${plain}`, { headers });
        expect([path, name, plain, response.status]).toEqual([path, name, plain, 200]);
      }
    }
  });
});

describe('a cursor whose key has the wrong type for its sort', () => {
  const forge = (cursor: object) => Buffer.from(JSON.stringify({ v: 1, ...cursor })).toString('base64url');

  test('is a 400 naming cursor, not a 500 or a page from a meaningless place', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const forged: Array<[string, 'asc' | 'desc', unknown]> = [
      ['createdAt', 'desc', 'not a time'],
      ['createdAt', 'asc', null],
      ['name', 'asc', 42],
      ['state', 'desc', null],
      ['durationMs', 'asc', 'x'],
      ['worker', 'desc', 7],
    ];
    for (const [sortBy, sortOrder, key] of forged) {
      const cursor = forge({ s: sortBy, o: sortOrder, k: key, i: 'x' });
      const response = await t.request('GET', `/api/jobs?sortBy=${sortBy}&sortOrder=${sortOrder}&cursor=${cursor}`, { headers: { cookie } });
      expect([sortBy, key, response.status]).toEqual([sortBy, key, 400]);
      expect(response.json.error.details.cursor).toEqual(['cursor is malformed']);
    }
    // keys of the right type still work, null included where a sort has nulls
    for (const [sortBy, key] of [['durationMs', null], ['createdAt', 5], ['name', 'a'], ['worker', null]] as const) {
      const cursor = forge({ s: sortBy, o: 'asc', k: key, i: 'x' });
      expect((await t.request('GET', `/api/jobs?sortBy=${sortBy}&sortOrder=asc&cursor=${cursor}`, { headers: { cookie } })).status).toBe(200);
    }
  });
});

describe('strings in request bodies are kept as they will be after a restart', () => {
  test('a lone surrogate escape is refused (per event on ingest, the whole body elsewhere); an escaped pair stays the character it encodes', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const { id, apiKey } = await t.createConnection(cookie, 'prod');
    const event = (externalId: string, name: string) => ({ type: 'job_state_change', timestamp: new Date(t.clock.nowMs()).toISOString(), framework: 'celery', connectionId: id, job: { externalId, name, state: 'queued', extensions: { k: ['v'] } } });
    // JSON.stringify would escape the lone surrogate itself; write the escapes as an SDK would
    const rawBody = JSON.stringify({ events: [event('LONE-x', 'ok'), event('pair-x', 'PAIR')] }).replaceAll('LONE', '\\ud800').replaceAll('PAIR', '\\ud83d\\ude00');
    const ingested = await t.request('POST', '/api/ingest', { rawBody, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } });
    expect([ingested.json.accepted, ingested.json.rejected, ingested.json.errors[0].index]).toEqual([1, 1, 0]);
    const list = await t.request('GET', '/api/jobs', { headers: { cookie } });
    expect(list.json.data.map((job: { externalId: string; name: string }) => [job.externalId, job.name])).toEqual([['pair-x', '\u{1F600}']]);
    const connection = await t.request('POST', '/api/connections', { rawBody: '{"name":"a\\udc00"}', headers: { cookie, 'content-type': 'application/json' } });
    expect([connection.status, connection.json.error.code, connection.json.error.message]).toEqual([400, 'VALIDATION_ERROR', 'invalid name']);
  });
});
