import { describe, expect, test } from 'bun:test';
import { testApp } from '../support/test-app.ts';

describe('health and the error envelope', () => {
  test('GET /api/health needs no authentication and reports ok with the server time', async () => {
    const t = await testApp();
    const response = await t.request('GET', '/api/health');
    expect(response.status).toBe(200);
    expect(response.json.status).toBe('ok');
    expect(Math.abs(Date.parse(response.json.timestamp) - Date.now())).toBeLessThan(60_000);
  });

  test('an unknown route answers the envelope with a docs_url that the service serves', async () => {
    const t = await testApp();
    const response = await t.request('GET', '/api/nope');
    expect(response.status).toBe(404);
    expect(response.json.error).toEqual({
      code: 'NOT_FOUND',
      message: 'no route for GET /api/nope',
      docs_url: '/docs/errors#NOT_FOUND',
    });
    const docs = await t.request('GET', '/docs/errors');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
    for (const code of ['VALIDATION_ERROR', 'UNAUTHORIZED', 'NOT_FOUND', 'DAILY_LIMIT_EXCEEDED', 'PAYLOAD_TOO_LARGE', 'INTERNAL_ERROR', 'CONNECTION_MISMATCH', 'QUEUE_LIMIT_EXCEEDED', 'WORKER_LIMIT_EXCEEDED', 'STORAGE_LIMIT_EXCEEDED', 'DAILY_BYTES_EXCEEDED']) {
      expect(docs.text).toContain(`id="${code}"`);
    }
  });

  test('an unexpected failure is a 500 without internals, logged on the server', async () => {
    const t = await testApp();
    const cookie = await t.login();
    // Sabotage a dependency so that the route throws something that is not a domain error.
    (t.connections as any).create = () => {
      throw new Error('secret internal detail');
    };
    const response = await t.request('POST', '/api/connections', { body: { name: 'prod' }, headers: { cookie } });
    expect(response.status).toBe(500);
    expect(response.json.error.code).toBe('INTERNAL_ERROR');
    expect(response.text).not.toContain('secret internal detail');
    expect(t.errors.join('\n')).toContain('secret internal detail');
  });
});
