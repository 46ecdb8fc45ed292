import { afterEach, describe, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { testApp, T0, type TestApp } from '../support/test-app.ts';
import { jobEvent, workerEvent } from '../support/events.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';

const running: Array<{ stop: () => unknown }> = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop();
});

/** The app on a real port, so the stream is read by a real HTTP client. */
async function served(options: Parameters<typeof testApp>[0] = {}) {
  const t = await testApp({ limits: { dailyEventLimit: 0 }, ...options });
  t.app.listen({ port: 0, hostname: '127.0.0.1' });
  running.push({ stop: () => t.app.stop(true) });
  const base = `http://127.0.0.1:${t.app.server!.port}`;
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  return { t, base, cookie, c };
}

async function open(base: string, cookie: string, init: { query?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}) {
  const response = await fetch(`${base}/api/events/stream${init.query ?? ''}`, { headers: { cookie, ...init.headers }, signal: init.signal });
  return { response, reader: response.body ? new SseMessageReader(response.body) : null };
}

/** A client that sends the request and never reads a byte of the response. */
async function openUnreadStream(base: string, cookie: string): Promise<Socket> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined); // reset when the server cuts it off
  socket.pause();
  socket.write(`GET /api/events/stream HTTP/1.1\r\nhost: ${hostname}\r\ncookie: ${cookie}\r\n\r\n`);
  return socket;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (condition()) return;
    await Bun.sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('GET /api/events/stream', () => {
  test('headers, retry first, then a job event with a ULID id and the Job list item', async () => {
    const { t, base, cookie, c } = await served();
    const { response, reader } = await open(base, cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect((await reader!.next())!.text).toBe('retry: 3000\n\n');
    await t.ingest(c.apiKey, [jobEvent(c.id, T0)]);
    const [message] = await reader!.nextEvents(2); // the job, and the queue it created
    expect(message!.event).toBe('job');
    expect(message!.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const job = JSON.parse(message!.data!);
    expect(job).toMatchObject({ externalId: 'task-1', state: 'queued', connectionId: c.id, queue: 'default' });
    expect(Object.keys(job)).toContain('stateChangedAt');
    await reader!.cancel();
  });

  test('another user\'s session does not receive the events; a revoke reaches every session of the connection', async () => {
    const { t, base, cookie, c } = await served();
    const bob = await t.createUser(cookie, 'bob@example.com');
    await t.createConnection(bob, 'bobs');
    const alice1 = await open(base, cookie);
    const alice2 = await open(base, cookie);
    const bobStream = await open(base, bob);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0, { state: 'active', queue: null })]);
    const [created] = await alice1.reader!.nextEvents(1);
    await alice2.reader!.nextEvents(1);
    const jobId = JSON.parse(created!.data!).id;
    await t.request('POST', `/api/jobs/${jobId}/revoke`, { headers: { cookie } });
    const [revoked] = await alice2.reader!.nextEvents(1);
    expect(JSON.parse(revoked!.data!)).toMatchObject({ id: jobId, state: 'cancelled' });
    // Bob's stream saw nothing but its preamble; a keep-alive proves it is alive and empty.
    expect((await bobStream.reader!.next())!.text).toBe('retry: 3000\n\n');
    expect((await bobStream.reader!.next())!.text).toBe(': keep-alive\n\n');
    for (const stream of [alice1, alice2, bobStream]) await stream.reader!.cancel();
  });

  test('resume with Last-Event-ID replays what came after; an id that fell out gets event: reset', async () => {
    const { t, base, cookie, c } = await served();
    const first = await open(base, cookie);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0, { externalId: 'a', queue: null }), jobEvent(c.id, T0, { externalId: 'b', queue: null }), jobEvent(c.id, T0, { externalId: 'c', queue: null })]);
    const events = await first.reader!.nextEvents(3);
    await first.reader!.cancel();
    const resumed = await open(base, cookie, { headers: { 'last-event-id': events[0]!.id! } });
    const replayed = await resumed.reader!.nextEvents(2);
    expect(replayed.map((message) => JSON.parse(message.data!).externalId)).toEqual(['b', 'c']);
    await resumed.reader!.cancel();
    const byQuery = await open(base, cookie, { query: `?lastEventId=${events[1]!.id}` });
    expect(JSON.parse((await byQuery.reader!.nextEvents(1))[0]!.data!).externalId).toBe('c');
    await byQuery.reader!.cancel();
    const gone = await open(base, cookie, { headers: { 'last-event-id': '01ARZ3NDEKTSV4RRFFQ69G5FAV' } });
    expect((await gone.reader!.nextEvents(1))[0]!.event).toBe('reset');
    await gone.reader!.cancel();
  });

  test('a lone dashboard that reconnects within the grace period resumes; after it, events stop being built and it gets reset', async () => {
    const { t, base, cookie, c } = await served({ live: { resumeGraceMs: 60_000 } });
    const ingestJob = (externalId: string) => t.ingest(c.apiKey, [jobEvent(c.id, T0, { externalId, queue: null })]);
    const resumeFrom = (lastEventId: string) => open(base, cookie, { headers: { 'last-event-id': lastEventId } });
    /** Closes the only stream and waits until the service has seen it go (its grace period starts then). */
    const leave = async (reader: SseMessageReader): Promise<void> => {
      const linesBefore = t.streamLog.length;
      await reader.cancel();
      await until(() => t.streamLog.length > linesBefore && t.live.subscriberCount() === 0, 'the dashboard to leave');
    };

    const first = await open(base, cookie);
    await ingestJob('a');
    const [seenA] = await first.reader!.nextEvents(1);
    await leave(first.reader!);

    t.clock.advance(59_999);
    await ingestJob('b');
    const withinGrace = await resumeFrom(seenA!.id!);
    const [replayed] = await withinGrace.reader!.nextEvents(1);
    expect(replayed!.event).toBe('job');
    expect(JSON.parse(replayed!.data!).externalId).toBe('b');
    await leave(withinGrace.reader!);

    t.clock.advance(60_000);
    await ingestJob('c');
    const afterGrace = await resumeFrom(replayed!.id!);
    expect((await afterGrace.reader!.nextEvents(1))[0]!.event).toBe('reset');
    await afterGrace.reader!.cancel();
  });

  test('a disconnect frees the subscriber at once', async () => {
    const { t, base, cookie } = await served();
    const controller = new AbortController();
    const { reader } = await open(base, cookie, { signal: controller.signal });
    await reader!.next();
    await until(() => t.live.subscriberCount() === 1, 'the subscriber');
    controller.abort();
    await until(() => t.live.subscriberCount() === 0, 'the subscriber to go');
  });

  test('a capped number of streams per user: past it, 429', async () => {
    const { base, cookie } = await served();
    const streams = [await open(base, cookie), await open(base, cookie), await open(base, cookie)];
    const refused = await fetch(`${base}/api/events/stream`, { headers: { cookie } });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe('RATE_LIMITED');
    for (const stream of streams) await stream.reader!.cancel();
  });

  test('a worker passing the heartbeat timeout is broadcast as offline when it happens', async () => {
    const { t, base, cookie, c } = await served();
    const { reader } = await open(base, cookie);
    await t.ingest(c.apiKey, [workerEvent(c.id, T0, { state: 'idle' })]);
    expect(JSON.parse((await reader!.nextEvents(1))[0]!.data!).state).toBe('idle');
    t.clock.advance(6001);
    t.live.announceOfflineWorkers();
    t.live.announceOfflineWorkers(); // announced once, not on every check
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 7000, { queue: null })]);
    const [offline, next] = await reader!.nextEvents(2);
    expect(offline!.event).toBe('worker');
    expect(JSON.parse(offline!.data!).state).toBe('offline');
    expect(next!.event).toBe('job');
    await reader!.cancel();
  });

  test('a client that never reads is cut off at its byte budget (logged as such) while ingest goes on and a reader gets everything', async () => {
    const budgetBytes = 256 * 1024;
    const { t, base, cookie, c } = await served({ live: { hub: { ringBufferEventsMax: 100, ringBufferBytesMax: 1 << 20, subscriberBufferBytesMax: budgetBytes, flushIntervalMs: 5, keepAliveIntervalMs: 60_000 } } });
    const stalled = await openUnreadStream(base, cookie);
    const reading = await open(base, cookie);
    await until(() => t.live.subscriberCount() === 2, 'both subscribers');
    const cutOffLine = (): string | undefined => t.streamLog.find((line) => line.includes('slow client cut off'));
    // Batches of ~100 KB: each is read by the reading client before the next, so only the
    // stalled one falls behind; it is cut once the socket buffers and its budget are full.
    let batches = 0;
    while (cutOffLine() === undefined && batches < 400) {
      const events = Array.from({ length: 10 }, (_, i) => jobEvent(c.id, T0, { externalId: `b${batches}-${i}`, queue: null, error: 'x'.repeat(10_000) }));
      expect((await t.ingest(c.apiKey, events)).json.accepted).toBe(10);
      const received = await reading.reader!.nextEvents(10);
      expect(received.map((message) => JSON.parse(message.data!).externalId)).toEqual(events.map((event) => event.job.externalId));
      batches++;
    }
    expect(cutOffLine()).toMatch(new RegExp(`^stream of user \\S+ \\(connections ${c.id}\\) ended: slow client cut off \\(more than ${budgetBytes} bytes behind`));
    expect(cutOffLine()).not.toContain('    at '); // one line, no stack trace
    await until(() => t.live.subscriberCount() === 1, 'the stalled client to be detached');
    stalled.destroy();
    await reading.reader!.cancel();
    await until(() => t.streamLog.some((line) => line.endsWith('ended: client went away')), 'the reader leaving to be logged');
  });

  test('needs a session', async () => {
    const { base } = await served();
    expect((await fetch(`${base}/api/events/stream`)).status).toBe(401);
  });
});

describe('a stream lives as long as its session', () => {
  /** Each test logs in (argon2) more than once; on a busy machine that takes seconds. */
  const LOGINS_MS = 30_000;

  /** Reads to the end; the stream must end (the test times out otherwise). Returns the events still delivered. */
  async function readToEnd(reader: SseMessageReader): Promise<string[]> {
    const events: string[] = [];
    for (let message = await reader.next(); message !== undefined; message = await reader.next()) if (message.event !== undefined) events.push(message.event);
    return events;
  }

  test("logout ends that session's streams at once; another session of the same user keeps streaming", async () => {
    const { t, base, cookie, c } = await served();
    const other = await t.login();
    const ended = await open(base, cookie);
    const kept = await open(base, other);
    await until(() => t.live.openStreamCount() === 2, 'both streams');
    expect((await t.request('POST', '/api/auth/logout', { headers: { cookie } })).status).toBe(204);
    expect(await readToEnd(ended.reader!)).toEqual([]);
    await until(() => t.streamLog.some((line) => line.endsWith('ended: its session or access ended (logout, expiry, the user disabled or removed, or a team membership changed)')), 'the end to be logged');
    expect(t.live.openStreamCount()).toBe(1);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0)]);
    expect((await kept.reader!.nextEvents(1))[0]!.event).toBe('job');
    // and the logged-out cookie opens no new one
    expect((await fetch(`${base}/api/events/stream`, { headers: { cookie } })).status).toBe(401);
    await kept.reader!.cancel();
  }, LOGINS_MS);

  test('a stream ends when its session expires, by the next liveness check', async () => {
    const { t, base, cookie } = await served({ live: { livenessCheckIntervalMs: 10 } });
    const stream = await open(base, cookie);
    await until(() => t.live.openStreamCount() === 1, 'the stream');
    t.clock.advance(7 * 86_400_000 - 1); // the test app's session time to live, less 1 ms
    t.live.endStreamsOfEndedSessions();
    expect(t.live.openStreamCount()).toBe(1);
    t.clock.advance(1);
    expect(await readToEnd(stream.reader!)).toEqual([]);
    expect(t.live.openStreamCount()).toBe(0);
  }, LOGINS_MS);

  test('deleting a connection ends the streams watching it; a stream of another connection goes on', async () => {
    const { t, base, cookie, c } = await served();
    const kept = await t.createConnection(cookie, 'staging');
    const ofDeleted = await open(base, cookie, { query: `?connectionId=${c.id}` });
    const ofKept = await open(base, cookie, { query: `?connectionId=${kept.id}` });
    await until(() => t.live.openStreamCount() === 2, 'both streams');
    expect((await t.request('DELETE', `/api/connections/${c.id}`, { headers: { cookie } })).status).toBe(204);
    expect(await readToEnd(ofDeleted.reader!)).toEqual([]);
    await t.ingest(kept.apiKey, [jobEvent(kept.id, T0)]);
    expect((await ofKept.reader!.nextEvents(1))[0]!.event).toBe('job');
    await ofKept.reader!.cancel();
  }, LOGINS_MS);
});
