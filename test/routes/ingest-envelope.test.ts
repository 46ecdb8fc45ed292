import { beforeAll, describe, expect, test } from 'bun:test';
import { T0, testApp, type TestApp } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';

let t: TestApp;
let connection: { id: string; apiKey: string };

beforeAll(async () => {
  t = await testApp({ limits: { dailyEventLimit: 0 } });
  connection = await t.createConnection(await t.login(), 'prod');
});

const auth = () => ({ authorization: `Bearer ${connection.apiKey}` });
let batches = 0;
// Each batch one millisecond later, so batches are never duplicates of each other.
const manyEvents = (count: number) => {
  const atMs = T0 + batches++;
  return Array.from({ length: count }, (_, i) => jobEvent(connection.id, atMs, { externalId: `job-${i}` }));
};

describe('ingest: key and envelope', () => {
  test('a missing or invalid API key is 401 invalid or missing API key', async () => {
    for (const headers of [{}, { authorization: 'Bearer sk_wrong' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
      const response = await t.request('POST', '/api/ingest', { body: { events: manyEvents(1) }, headers });
      expect(response.status).toBe(401);
      expect(response.json.error).toMatchObject({ code: 'UNAUTHORIZED', message: 'invalid or missing API key' });
    }
  });

  test('a session cookie does not authenticate ingest', async () => {
    const cookie = await t.login();
    const response = await t.request('POST', '/api/ingest', { body: { events: manyEvents(1) }, headers: { cookie } });
    expect(response.status).toBe(401);
  });

  test('a Content-Type other than application/json is 415', async () => {
    const response = await t.request('POST', '/api/ingest', { rawBody: JSON.stringify({ events: manyEvents(1) }), headers: { ...auth(), 'content-type': 'text/plain' } });
    expect(response.status).toBe(415);
    expect(response.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const withCharset = await t.request('POST', '/api/ingest', { rawBody: JSON.stringify({ events: manyEvents(1) }), headers: { ...auth(), 'content-type': 'application/json; charset=utf-8' } });
    expect(withCharset.status).toBe(200);
  });

  test('a body over 5 MB is 413 in the envelope, decided before parsing', async () => {
    const declared = await t.request('POST', '/api/ingest', { rawBody: '{}', headers: { ...auth(), 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024 + 1) } });
    expect(declared.status).toBe(413);
    expect(declared.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    const padding = ' '.repeat(5 * 1024 * 1024);
    const actual = await t.request('POST', '/api/ingest', { rawBody: `{"events":[]${padding}}`, headers: { ...auth(), 'content-type': 'application/json' } });
    expect(actual.status).toBe(413);
  });

  test('invalid JSON is a 400 validation error', async () => {
    const response = await t.request('POST', '/api/ingest', { rawBody: '{"events": [', headers: { ...auth(), 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    expect(response.json.error.details.body).toBeDefined();
  });

  test('events missing, not an array, empty, or over 1,000 fail the whole request naming events', async () => {
    for (const body of [{}, { events: 'x' }, { events: [] }, { events: manyEvents(1001) }, []]) {
      const response = await t.request('POST', '/api/ingest', { body, headers: auth() });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('VALIDATION_ERROR');
      expect(response.json.error.details.events).toHaveLength(1);
    }
  });

  test('exactly 1,000 events are accepted', async () => {
    const response = await t.request('POST', '/api/ingest', { body: { events: manyEvents(1000) }, headers: auth() });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ accepted: 1000, rejected: 0, skipped: 0, truncated: 0 });
  });
});
