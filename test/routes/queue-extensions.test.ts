/**
 * A queue snapshot's `extensions` (BullMQ state counts, Sidekiq latency): refused past the
 * same limits as job extensions, kept on the queue, served by GET /api/queues and the
 * stream, counted in the daily bytes, and unchanged after a restart by log or snapshot.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { Engine } from '../../actors/engine.ts';
import { EVENT_OVERHEAD_BYTES } from '../../actors/ingest/event-bytes.ts';
import { QueueMetrics } from '../../actors/metrics/queue-metrics.ts';
import { recordingLog, replayedAndRestored } from '../support/recording-log.ts';
import { testApp, T0, type TestApp } from '../support/test-app.ts';
import { queueEvent } from '../support/events.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';

const BULLMQ_COUNTS = { waiting: 4, prioritized: 1, delayed: 2, active: 3, failed: 5, completed: 90, paused: 0 };


async function setup(options: Parameters<typeof testApp>[0] = {}) {
  const t = await testApp({ limits: { dailyEventLimit: 0 }, ...options });
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  const queues = async (t2: TestApp = t) => (await t2.request('GET', '/api/queues', { headers: { cookie } })).json.data as Array<Record<string, any>>;
  const send = async (queue: Record<string, unknown>, atMs = T0) => {
    const response = await t.ingest(c.apiKey, [queueEvent(c.id, atMs, queue)]);
    expect(response.status).toBe(200);
    return response.json as { accepted: number; errors?: Array<{ code: string; details: Record<string, string[]> }> };
  };
  return { t, cookie, c, queues, send };
}

describe('queue_snapshot extensions', () => {
  test('are accepted and returned as sent; the newest snapshot replaces them (`{}` clears), an older one or one without them does not', async () => {
    const { send, queues } = await setup();
    expect((await queues())[0]).toBeUndefined();
    expect((await send({ name: 'mail', depth: 4, extensions: BULLMQ_COUNTS }, T0 - 2000)).accepted).toBe(1);
    expect((await queues())[0]).toMatchObject({ name: 'mail', depth: 4, extensions: BULLMQ_COUNTS });
    await send({ name: 'mail', depth: 6, extensions: { waiting: 6 } }, T0 - 1000);
    expect((await queues())[0]!.extensions).toEqual({ waiting: 6 });
    await send({ name: 'mail', depth: 9, extensions: { waiting: 9 } }, T0 - 1500); // older: ignored
    expect((await queues())[0]).toMatchObject({ depth: 6, extensions: { waiting: 6 } });
    await send({ name: 'mail', depth: 7, extensions: null }, T0);
    expect((await queues())[0]).toMatchObject({ depth: 7, extensions: { waiting: 6 } });
    await send({ name: 'mail', depth: 7, extensions: {} }, T0 + 1);
    expect((await queues())[0]!.extensions).toEqual({});
    await send({ name: 'plain', depth: 1 });
    expect((await queues()).find((queue) => queue.name === 'plain')!.extensions).toEqual({});
  });

  test('limits at their edges, like job extensions: 8 levels, 64 KB serialized, prototype keys, an object, well-formed strings', async () => {
    const { send } = await setup();
    let sent = 0;
    const fieldsOf = async (extensions: unknown) => {
      // a new instant each time: a snapshot of the same queue at the same instant is a duplicate
      const reply = await send({ name: 'q', depth: 1, extensions }, T0 - ++sent);
      return reply.accepted === 1 ? 'accepted' : Object.keys(reply.errors![0]!.details);
    };
    const nested = (levels: number): Record<string, unknown> => (levels === 1 ? { leaf: 1 } : { next: nested(levels - 1) });
    expect(await fieldsOf(nested(8))).toBe('accepted');
    expect(await fieldsOf(nested(9))).toEqual(['queue.extensions']);
    const overhead = JSON.stringify({ blob: '' }).length;
    expect(await fieldsOf({ blob: 'x'.repeat(64 * 1024 - overhead) })).toBe('accepted');
    expect(await fieldsOf({ blob: 'x'.repeat(64 * 1024 - overhead + 1) })).toEqual(['queue.extensions']);
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      expect(await fieldsOf(JSON.parse(`{"outer": {"${key}": {"polluted": true}}}`))).toEqual(['queue.extensions']);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await fieldsOf([1, 2])).toEqual(['queue.extensions']);
    expect(await fieldsOf('latency')).toEqual(['queue.extensions']);
    expect(await fieldsOf({ note: { list: ['ok', 'a\ud800b'] } })).toEqual(['queue.extensions.note.list.1']);
  });

  test('count in the daily ingest bytes as their serialized size', async () => {
    const { t, c, send } = await setup();
    await send({ name: 'q', depth: 1 });
    const before = t.engine.connection(c.id)!.quota.bytesUsed(T0);
    const extensions = { latency: 12.5, note: 'y'.repeat(1000) };
    await send({ name: 'q', depth: 1, extensions }, T0 - 1);
    expect(t.engine.connection(c.id)!.quota.bytesUsed(T0) - before).toBe(EVENT_OVERHEAD_BYTES + 'q'.length + JSON.stringify(extensions).length);
  });

  test('refused once the daily ingest budget cannot hold them, while a bare snapshot still fits', async () => {
    const { send } = await setup({ limits: { dailyEventLimit: 0, dailyIngestBytesMax: 2000 } });
    const reply = await send({ name: 'q', depth: 1, extensions: { note: 'z'.repeat(3000) } });
    expect(reply.accepted).toBe(0);
    expect(reply.errors![0]!.code).toBe('DAILY_BYTES_EXCEEDED');
    expect((await send({ name: 'q', depth: 1 })).accepted).toBe(1);
  });

  test('replaying the log and restoring a snapshot give the same extensions', async () => {
    const log = recordingLog();
    const { t, c, send } = await setup({ log });
    await send({ name: 'mail', depth: 4, extensions: BULLMQ_COUNTS }, T0 - 1000);
    await send({ name: 'sidekiq', depth: 2, extensions: { latency: 3.25 } }, T0 - 1000);
    await send({ name: 'sidekiq', depth: 2 }, T0);
    for (const engine of replayedAndRestored(t.engine, log.records)) {
      const actor = engine.connection(c.id)!;
      expect(actor.queues.get('mail')!.extensions).toEqual(BULLMQ_COUNTS);
      expect(actor.queues.get('sidekiq')!.extensions).toEqual({ latency: 3.25 });
    }
  });

  test('a snapshot from before queue extensions loads; its queues have none until the next snapshot', async () => {
    const { t, c } = await setup();
    const engine = new Engine({ clock: t.clock, log: { append: async () => 0 }, limits: t.engine.connection(c.id)!.limits });
    const restorer = engine.restorer();
    const queue = { id: 'queue-id', connectionId: c.id, name: 'mail', framework: 'bullmq', depth: 3, consumers: null, lastSnapshotMs: T0 - 60_000, lastSeenMs: T0 - 60_000, createdAtMs: T0 - 60_000, metrics: new QueueMetrics().toSnapshot() };
    for (const chunk of [
      { k: 'header', version: 2, takenAtMs: T0 },
      { k: 'accounts', data: t.engine.accounts.toSnapshot() },
      { k: 'connection', id: c.id, quota: { day: Math.floor(T0 / 86_400_000), used: 0 }, dedupKeys: [], workers: [], queues: [queue], commands: [] },
      { k: 'end' },
    ]) {
      restorer.restore(chunk);
    }
    const actor = engine.connection(c.id)!;
    expect(actor.queues.get('mail')!.extensions).toBeNull();
    await engine.commit({ t: 'ingest', connectionId: c.id, receivedAtMs: T0, events: [{ kind: 'queue', atMs: T0, framework: 'bullmq', name: 'mail', depth: 5, extensions: { waiting: 5 } }] });
    expect(actor.queues.get('mail')).toMatchObject({ depth: 5, extensions: { waiting: 5 } });
  });
});

describe('the stream', () => {
  const running: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of running.splice(0)) await stop();
  });

  test("its queue event carries the queue's extensions", async () => {
    const { t, c, cookie, send } = await setup();
    t.app.listen({ port: 0, hostname: '127.0.0.1' });
    running.push(() => t.app.stop(true));
    const response = await fetch(`http://127.0.0.1:${t.app.server!.port}/api/events/stream`, { headers: { cookie } });
    const reader = new SseMessageReader(response.body!);
    expect((await reader.next())!.text).toBe('retry: 3000\n\n');
    await send({ name: 'mail', depth: 4, extensions: BULLMQ_COUNTS });
    const [message] = await reader.nextEvents(1);
    expect(message!.event).toBe('queue');
    expect(JSON.parse(message!.data!)).toMatchObject({ name: 'mail', connectionId: c.id, extensions: BULLMQ_COUNTS });
    await reader.cancel();
  });
});
