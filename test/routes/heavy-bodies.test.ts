/**
 * What one tenant's heavy requests may cost the service (README "Security" > "HTTP edge"):
 * bodies whose structure no request needs are refused with the envelope before they are
 * parsed, a used-up quota is answered before a large body is read, and what one connection
 * may have in flight (requests, body bytes) is capped, with 429 and Retry-After past it.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { JSON_SHAPE_LIMITS } from '../../src/http/json-shape.ts';
import { INGEST_EVENT_BYTES_MAX, INGEST_EVENT_MEMBERS_MAX } from '../../src/http/ingest-body.ts';
import { QUOTA_SPENT_BODY_BYTES_MAX } from '../../src/routes/ingest.ts';
import { jobEvent, workerEvent } from '../support/events.ts';
import { BASE, T0, testApp, type TestApp } from '../support/test-app.ts';

// each test logs in (an argon2id hash) and some send megabytes: a busy machine needs more than the default 5 s
setDefaultTimeout(30_000);

/** A request body that sends `head` and then holds until `finish` is called with the rest (or never). */
function heldBody(head: string) {
  let finish!: (rest: string) => void;
  const rest = new Promise<string>((resolve) => (finish = resolve));
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(head));
      controller.enqueue(new TextEncoder().encode(await rest));
      controller.close();
    },
  });
  return { body, finish };
}

function post(t: TestApp, path: string, apiKey: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  return t.app.handle(new Request(BASE + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers }, body }));
}

async function setUp(options: Parameters<typeof testApp>[0] = {}) {
  const t = await testApp(options);
  const cookie = await t.login();
  return { t, connection: await t.createConnection(cookie, 'heavy'), other: await t.createConnection(cookie, 'other') };
}

describe('hostile shapes are refused before they are parsed', () => {
  test('5 MB of nested arrays outside the events: 400 in the envelope naming the depth limit, the rest unread, the connection closed', async () => {
    const { t, connection } = await setUp();
    const depth = 2_600_000;
    const response = await post(t, '/api/ingest', connection.apiKey, `{"other":${'['.repeat(depth)}${']'.repeat(depth)},"events":[]}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('connection')).toBe('close');
    const body = (await response.json()) as { error: { code: string; docs_url: string; details: unknown } };
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.docs_url).toBe('/docs/errors#VALIDATION_ERROR');
    expect(body.error.details).toEqual({ body: [`must not nest more than ${JSON_SHAPE_LIMITS.depthMax} levels deep`] });
  });

  test('5 MB of nested arrays as an event: 400 naming the hostile depth, the rest unread', async () => {
    const { t, connection } = await setUp();
    const depth = 2_600_000;
    const response = await post(t, '/api/ingest', connection.apiKey, `{"events":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('connection')).toBe('close');
    expect(((await response.json()) as { error: { details: unknown } }).error.details).toEqual({
      body: [`must not nest more than ${JSON_SHAPE_LIMITS.hostileDepthMax} levels deep anywhere (an event deeper than ${JSON_SHAPE_LIMITS.depthMax - 2} levels is refused on its own)`],
    });
  });

  test('one event nesting deeper than the limit is rejected on its own; the others are taken', async () => {
    const { t, connection } = await setUp();
    let progress: unknown = 1;
    for (let level = 0; level < 40; level++) progress = [progress];
    const events = [
      jobEvent(connection.id, T0, { externalId: 'before', state: 'completed' }),
      jobEvent(connection.id, T0, { externalId: 'deep', extensions: { progress } }),
      jobEvent(connection.id, T0, { externalId: 'after', state: 'completed' }),
    ];
    const response = await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events }));
    expect(response.status).toBe(200);
    const reply = (await response.json()) as { accepted: number; rejected: number; errors: unknown[] };
    expect(reply).toMatchObject({ accepted: 2, rejected: 1 });
    expect(reply.errors).toEqual([
      { index: 1, code: 'VALIDATION_ERROR', message: 'event failed validation', details: { '(event)': [`must not nest more than ${JSON_SHAPE_LIMITS.depthMax - 2} levels deep (the event itself is level 1)`] } },
    ]);
    expect(t.engine.connection(connection.id)!.jobs.size).toBe(2);
  });

  test('an event whose extensions hold 400,000 keys: 400 naming the event\'s values limit', async () => {
    const { t, connection } = await setUp();
    const keys = Array.from({ length: 400_000 }, (_, k) => `"k${k}":1`).join(',');
    const event = JSON.stringify(jobEvent(connection.id, T0)).slice(0, -2);
    const response = await post(t, '/api/ingest', connection.apiKey, `{"events":[${event},"extensions":{${keys}}}}]}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { details: unknown } }).error.details).toEqual({
      'events[0]': [`event 0 must not hold more than ${INGEST_EVENT_MEMBERS_MAX} values`],
    });
  });

  test('an event with more members in one object than the limit is rejected on its own', async () => {
    const { t, connection } = await setUp();
    const keys = Array.from({ length: JSON_SHAPE_LIMITS.objectMembersMax + 1 }, (_, k) => `"k${k}":1`).join(',');
    const event = JSON.stringify(jobEvent(connection.id, T0, { externalId: 'wide' })).slice(0, -2);
    const fine = JSON.stringify(jobEvent(connection.id, T0, { externalId: 'fine' }));
    const response = await post(t, '/api/ingest', connection.apiKey, `{"events":[${event},"extensions":{${keys}}}},${fine}]}`);
    expect(response.status).toBe(200);
    const reply = (await response.json()) as { accepted: number; errors: Array<{ index: number; details: unknown }> };
    expect(reply.accepted).toBe(1);
    expect(reply.errors).toMatchObject([{ index: 0, details: { '(event)': [`must not hold more than ${JSON_SHAPE_LIMITS.objectMembersMax} members in one object`] } }]);
  });

  test('an event larger than any the contract allows: 400 naming the event; nothing of the batch is stored', async () => {
    const { t, connection } = await setUp();
    const events = [jobEvent(connection.id, T0, { externalId: 'fine' }), { ...jobEvent(connection.id, T0, { externalId: 'huge' }), padding: 'x'.repeat(INGEST_EVENT_BYTES_MAX) }];
    const response = await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events }));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { details: unknown } }).error.details).toEqual({ 'events[1]': [`event 1 must be at most ${INGEST_EVENT_BYTES_MAX} bytes`] });
    expect(t.engine.connection(connection.id)!.jobs.size).toBe(0);
  });

  test('an agent ack nested beyond the limit is refused the same way', async () => {
    const { t, connection } = await setUp();
    const deep = '['.repeat(JSON_SHAPE_LIMITS.depthMax + 1) + ']'.repeat(JSON_SHAPE_LIMITS.depthMax + 1);
    const response = await post(t, '/api/agent/commands/ack', connection.apiKey, `{"ids":${deep}}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/levels deep/);
  });

  test('a large body padded with whitespace around its events is taken: only what the envelope carries counts against its 64 KB', async () => {
    const { t, connection } = await setUp();
    const json = JSON.stringify({ events: [jobEvent(connection.id, T0, { externalId: 'padded' })] });
    const padded = `${' '.repeat(1 << 20)}${json.slice(0, -1)}${'\n'.repeat(1 << 20)}}${'\t'.repeat(1 << 20)}`;
    const response = await post(t, '/api/ingest', connection.apiKey, padded);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { accepted: number }).accepted).toBe(1);
    const carried = `{"padding":"${'x'.repeat(64 * 1024)}",${json.slice(1)}${' '.repeat(1 << 20)}`;
    expect((await post(t, '/api/ingest', connection.apiKey, carried)).status).toBe(400);
  });

  test('a large valid batch, parsed and validated event by event, is stored exactly as sent', async () => {
    const { t, connection } = await setUp({ limits: { dailyEventLimit: 0 } });
    const stacktrace = 'Traceback (most recent call last):\n  File "tasks.py", line 1\n'.repeat(40);
    const events = Array.from({ length: 1000 }, (_, i) => jobEvent(connection.id, T0, { externalId: `big-${i}`, state: 'failed', stacktrace, extensions: { i, nested: { deep: [i] } } }));
    events[500] = { ...events[500]!, framework: 'not-a-framework' };
    const response = await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events }));
    const reply = (await response.json()) as { accepted: number; rejected: number; errors: Array<{ index: number }> };
    expect(response.status).toBe(200);
    expect([reply.accepted, reply.rejected, reply.errors.map((error) => error.index)]).toEqual([999, 1, [500]]);
    const jobs = t.engine.connection(connection.id)!.jobs;
    expect(jobs.size).toBe(999);
    expect(JSON.stringify(events).length).toBeGreaterThan(2 << 20); // parsed in pieces, not in one
  });
});

describe('a used-up daily quota', () => {
  // only job events count against the quota, so a spent connection may still send worker and
  // queue events, in bodies of at most QUOTA_SPENT_BODY_BYTES_MAX; anything larger is refused unread
  async function spent() {
    const set = await setUp({ limits: { dailyEventLimit: 1 }, bodyTimeoutMs: 1_000 });
    expect((await set.t.ingest(set.connection.apiKey, [jobEvent(set.connection.id, T0)])).status).toBe(200);
    return set;
  }

  /** `unread`: the body was left unread, so the connection is closed after the answer. */
  async function expectQuotaRefusal(response: Response, unread = true) {
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe(String(14 * 3600));
    expect(response.headers.get('connection')).toBe(unread ? 'close' : null);
    const body = (await response.json()) as { error: { code: string }; usage: unknown };
    expect(body.error.code).toBe('DAILY_LIMIT_EXCEEDED');
    expect(body.usage).toEqual({ used: 1, limit: 1, remaining: 0, resetAt: '2026-11-22T00:00:00.000Z' });
  }

  test('a body declared larger than a spent connection may send is answered 429 with usage and Retry-After before a byte is read', async () => {
    // a body that never arrives: read, it would end in the body deadline's 408
    const { t, connection } = await spent();
    const never = heldBody('{"events":[');
    await expectQuotaRefusal(await post(t, '/api/ingest', connection.apiKey, never.body, { 'content-length': String(QUOTA_SPENT_BODY_BYTES_MAX + 1) }));
  });

  test('a chunked body is refused with the same 429 as soon as it passes that size', async () => {
    const { t, connection } = await spent();
    const held = heldBody(`{"events":[${'{"a":1},'.repeat(QUOTA_SPENT_BODY_BYTES_MAX / 8 + 1)}`);
    await expectQuotaRefusal(await post(t, '/api/ingest', connection.apiKey, held.body));
  });

  test('a small body with a job event is refused 429; one of worker events alone is taken', async () => {
    const { t, connection } = await spent();
    await expectQuotaRefusal(await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events: [jobEvent(connection.id, T0, { externalId: 'late' })] })), false);
    const taken = await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events: [workerEvent(connection.id, T0)] }));
    expect(taken.status).toBe(200);
    expect(((await taken.json()) as { accepted: number }).accepted).toBe(1);
  });
});

describe('what one connection may have in flight', () => {
  test('past the request cap: 429 RATE_LIMITED with Retry-After, the body unread; other connections and later requests go on', async () => {
    const { t, connection, other } = await setUp({ inFlightPerConnection: { requestsMax: 2, bytesMax: 64 << 20 } });
    const held = [heldBody('{"events":['), heldBody('{"events":[')];
    const pending = held.map((each) => post(t, '/api/ingest', connection.apiKey, each.body));
    await Bun.sleep(20);
    const refused = await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events: [jobEvent(connection.id, T0)] }));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const body = (await refused.json()) as { error: { code: string; message: string; details: unknown } };
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(body.error.details).toEqual({ connection: ['2 requests of this connection are in flight, the most allowed at once is 2'] });
    // the agent's ack counts against the same connection
    expect((await post(t, '/api/agent/commands/ack', connection.apiKey, JSON.stringify({ ids: ['x'] }))).status).toBe(429);
    // another tenant is not affected
    expect((await t.ingest(other.apiKey, [jobEvent(other.id, T0)])).status).toBe(200);
    held.forEach((each, i) => each.finish(`${JSON.stringify(jobEvent(connection.id, T0, { externalId: `held-${i}` }))}]}`));
    expect((await Promise.all(pending)).map((response) => response.status)).toEqual([200, 200]);
    expect((await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'after' })])).status).toBe(200);
  });

  test('past the byte cap (a held body by its declared length, the next by its bytes): 429 before reading; a failed request gives its share back', async () => {
    const { t, connection } = await setUp({ inFlightPerConnection: { requestsMax: 10, bytesMax: 1000 } });
    const held = heldBody('{"events":[');
    const pending = post(t, '/api/ingest', connection.apiKey, held.body, { 'content-length': '900' });
    await Bun.sleep(20);
    const refused = await post(t, '/api/ingest', connection.apiKey, JSON.stringify({ events: [jobEvent(connection.id, T0)] }));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { details: unknown } }).error.details).toEqual({
      connection: ["the bodies of this connection's requests in flight would exceed 1000 bytes"],
    });
    held.finish('}'); // not JSON: a 400, and its bytes are given back
    expect((await pending).status).toBe(400);
    expect((await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)])).status).toBe(200);
  });

  test('a chunked body (no declared length) is counted as it arrives and cut off past the byte cap', async () => {
    const { t, connection } = await setUp({ inFlightPerConnection: { requestsMax: 10, bytesMax: 200 * 1024 } });
    const big = JSON.stringify({ events: Array.from({ length: 1000 }, (_, i) => jobEvent(connection.id, T0, { externalId: `chunked-${i}`, error: 'e'.repeat(300) })) });
    expect(big.length).toBeGreaterThan(200 * 1024);
    const bytes = new TextEncoder().encode(big);
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + 16 * 1024));
        at += 16 * 1024;
      },
    });
    const response = await post(t, '/api/ingest', connection.apiKey, stream);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(at).toBeLessThan(bytes.length); // the rest was never read
    expect(t.engine.connection(connection.id)!.jobs.size).toBe(0);
    expect((await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)])).status).toBe(200);
  });
});
