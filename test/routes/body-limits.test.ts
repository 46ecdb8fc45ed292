/**
 * Request bodies at the edge (docs/security.md, "HTTP edge"): every route reads its body
 * through one capped reader, checks credentials first where it can, and a body that does
 * not arrive in time is cut off.
 */
import { describe, expect, test } from 'bun:test';
import { SMALL_BODY_BYTES_MAX } from '../../src/http/read-body.ts';
import { BASE, T0, testApp, type TestApp } from '../support/test-app.ts';

const KiB = 1024;
const CHUNK = 8 * KiB;

/** A body of `total` bytes of spaces produced on demand, counting what the server pulled. */
function countingBody(total: number) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        const size = Math.min(CHUNK, total - pulled);
        pulled += size;
        controller.enqueue(new Uint8Array(size).fill(0x20));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

/** A body that sends `{"` and then nothing, ever. */
function stalledBody() {
  return new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"')) });
}

async function send(t: TestApp, method: string, path: string, headers: Record<string, string>, body: string | ReadableStream<Uint8Array>) {
  const response = await t.app.handle(new Request(BASE + path, { method, headers, body, duplex: 'half' } as RequestInit));
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: (text === '' ? null : JSON.parse(text)) as any };
}

async function setUp() {
  const t = await testApp();
  const cookie = await t.login();
  const { apiKey } = await t.createConnection(cookie, 'prod');
  return { t, cookie, apiKey };
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('per-route body caps', () => {
  const capped: Array<{ path: string; cap: number; auth: 'cookie' | 'key' }> = [
    { path: '/api/auth/login', cap: 16 * KiB, auth: 'cookie' },
    { path: '/api/users', cap: 16 * KiB, auth: 'cookie' },
    { path: '/api/connections', cap: 16 * KiB, auth: 'cookie' },
    { path: '/api/jobs/bulk/revoke', cap: 64 * KiB, auth: 'cookie' },
    { path: '/api/jobs/bulk/retry', cap: 64 * KiB, auth: 'cookie' },
    { path: '/api/agent/commands/ack', cap: 128 * KiB, auth: 'key' },
    { path: '/api/ingest', cap: 5 * 1024 * KiB, auth: 'key' },
  ];

  test('a declared length over the cap is a 413 envelope before any byte is read', async () => {
    const { t, cookie, apiKey } = await setUp();
    for (const { path, cap, auth } of capped) {
      const credentials: Record<string, string> = auth === 'cookie' ? { cookie } : { authorization: `Bearer ${apiKey}` };
      const body = countingBody(cap + 1);
      const response = await send(t, 'POST', path, { ...JSON_TYPE, ...credentials, 'content-length': String(cap + 1) }, body.stream);
      expect([path, response.status, response.json.error.code, response.json.error.message]).toEqual([path, 413, 'PAYLOAD_TOO_LARGE', `request body exceeds ${cap} bytes`]);
      expect(response.headers.get('connection')).toBe('close');
      expect([path, body.pulled()]).toEqual([path, 0]);
    }
  });

  test('a chunked body is counted while read: 413 once past the cap, and no further', async () => {
    const { t, cookie, apiKey } = await setUp();
    for (const { path, cap, auth } of capped) {
      const credentials: Record<string, string> = auth === 'cookie' ? { cookie } : { authorization: `Bearer ${apiKey}` };
      const body = countingBody(cap + 10 * CHUNK);
      const response = await send(t, 'POST', path, { ...JSON_TYPE, ...credentials }, body.stream);
      expect([path, response.status, response.json.error.code]).toEqual([path, 413, 'PAYLOAD_TOO_LARGE']);
      expect(body.pulled()).toBeLessThanOrEqual(cap + 2 * CHUNK);
    }
  });

  test('no route reads more than 128 KiB of a body, including the ones that take none', async () => {
    const { t, cookie, apiKey } = await setUp();
    const routes: Array<[string, string]> = [
      ['POST', '/api/auth/logout'], ['POST', '/api/jobs/x/revoke'], ['POST', '/api/jobs/x/retry'], ['DELETE', '/api/connections/x'],
      ['POST', '/api/auth/login'], ['POST', '/api/users'], ['POST', '/api/connections'], ['POST', '/api/jobs/bulk/revoke'],
      ['POST', '/api/agent/commands/ack'], ['PUT', '/api/jobs'], ['POST', '/api/health'],
    ];
    for (const [method, path] of routes) {
      const body = countingBody(4 * 1024 * KiB);
      const response = await send(t, method, path, { ...JSON_TYPE, cookie, authorization: `Bearer ${apiKey}` }, body.stream);
      expect(response.status).toBeLessThan(500);
      expect([method, path, body.pulled() <= 128 * KiB + 2 * CHUNK]).toEqual([method, path, true]);
    }
  });

  test('dashboard bodies must be application/json (415), like ingest', async () => {
    const { t, cookie } = await setUp();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await send(t, 'POST', '/api/connections', { cookie, 'content-type': type }, '{"name":"x"}');
      expect(response.status).toBe(415);
      expect(response.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });
});

describe('credentials before the body', () => {
  test('ingest and agent ack with an unknown key answer 401 without reading the body', async () => {
    const { t } = await setUp();
    for (const path of ['/api/ingest', '/api/agent/commands/ack']) {
      const body = countingBody(1024 * KiB);
      const response = await send(t, 'POST', path, { ...JSON_TYPE, authorization: 'Bearer sk_unknown' }, body.stream);
      expect([path, response.status, response.json.error.code]).toEqual([path, 401, 'UNAUTHORIZED']);
      expect([path, body.pulled()]).toEqual([path, 0]);
    }
  });

  test('dashboard routes without a session answer 401 without reading the body', async () => {
    const { t } = await setUp();
    for (const path of ['/api/users', '/api/connections', '/api/jobs/bulk/revoke']) {
      const body = countingBody(1024 * KiB);
      const response = await send(t, 'POST', path, JSON_TYPE, body.stream);
      expect([path, response.status]).toEqual([path, 401]);
      expect([path, body.pulled()]).toEqual([path, 0]);
    }
  });
});

describe('the body deadline', () => {
  test('a body that stops arriving is cut off with 408 REQUEST_TIMEOUT in the envelope, closing the connection', async () => {
    const t = await testApp({ bodyTimeoutMs: 200 });
    const cookie = await t.login();
    const { apiKey } = await t.createConnection(cookie, 'prod');
    for (const [path, credentials] of [
      ['/api/ingest', { authorization: `Bearer ${apiKey}` }],
      ['/api/connections', { cookie }],
    ] as const) {
      const response = await send(t, 'POST', path, { ...JSON_TYPE, ...credentials }, stalledBody());
      expect(response.status).toBe(408);
      expect(response.json.error).toEqual({ code: 'REQUEST_TIMEOUT', message: 'request body did not arrive within 0.2 s', docs_url: '/docs/errors#REQUEST_TIMEOUT' });
      expect(response.headers.get('connection')).toBe('close');
    }
    expect(t.errors).toEqual([]);
  });

  test('a small declared body (read whole, not as a stream) that stops arriving gets the same 408', async () => {
    const t = await testApp({ bodyTimeoutMs: 200 });
    const cookie = await t.login();
    const { apiKey } = await t.createConnection(cookie, 'prod');
    for (const declared of [100, SMALL_BODY_BYTES_MAX]) {
      const response = await send(t, 'POST', '/api/ingest', { ...JSON_TYPE, authorization: `Bearer ${apiKey}`, 'content-length': String(declared) }, stalledBody());
      expect(response.status).toBe(408);
      expect(response.json.error).toEqual({ code: 'REQUEST_TIMEOUT', message: 'request body did not arrive within 0.2 s', docs_url: '/docs/errors#REQUEST_TIMEOUT' });
      expect(response.headers.get('connection')).toBe('close');
    }
    expect(t.errors).toEqual([]);
  });

  test('a small declared body that arrives is read whole and ingested', async () => {
    const t = await testApp();
    const { id: connectionId, apiKey } = await t.createConnection(await t.login(), 'prod');
    const body = JSON.stringify({ events: [{ type: 'job_state_change', timestamp: new Date(T0).toISOString(), framework: 'celery', connectionId, job: { externalId: 'small', name: 'tasks.add', state: 'queued' } }] });
    const response = await send(t, 'POST', '/api/ingest', { ...JSON_TYPE, authorization: `Bearer ${apiKey}`, 'content-length': String(Buffer.byteLength(body)) }, body);
    expect([response.status, response.json.accepted]).toEqual([200, 1]);
  });
});
