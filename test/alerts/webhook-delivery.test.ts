/**
 * Webhooks end to end against a real receiver on loopback (ALERT_WEBHOOK_ALLOW_PRIVATE=true
 * here, since loopback is otherwise refused): every kind firing, then resolved, each
 * request signed; a receiver failing then recovering is retried; a redirect is not followed.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { alertFixture } from './alert-fixture.ts';
import { hmacHex, webhookReceiver, type Received } from './webhook-receiver.ts';

const receivers: Array<{ stop: () => void }> = [];
afterEach(() => {
  for (const receiver of receivers.splice(0)) receiver.stop();
});

function receiver(...args: Parameters<typeof webhookReceiver>) {
  const started = webhookReceiver(...args);
  receivers.push(started);
  return started;
}

const iso = (ms: number) => new Date(ms).toISOString();

function signedPayload(request: Received, secret: string) {
  expect(request.headers.get('x-jobwatch-signature')).toBe(`sha256=${hmacHex(secret, request.body)}`);
  expect(request.headers.get('content-type')).toBe('application/json');
  return JSON.parse(request.body);
}

describe('webhook delivery', () => {
  test('every kind fires, then resolves: one signed json payload each, with the documented fields', async () => {
    const hooks = receiver();
    const f = await alertFixture({ alerts: { allowPrivate: true }, publicUrl: 'https://jobwatch.example.com' });
    const { channel, secret } = await f.createChannel({ url: hooks.url() });
    const on = { channelIds: [channel.id] };
    const rules = {
      failure_rate: await f.createRule({ kind: 'failure_rate', queue: 'default', threshold: 0.5, windowSeconds: 600, ...on }),
      queue_depth: await f.createRule({ kind: 'queue_depth', queue: 'default', threshold: 10, windowSeconds: 60, ...on }),
      worker_offline: await f.createRule({ kind: 'worker_offline', windowSeconds: 60, ...on }),
      task_missing: await f.createRule({ kind: 'task_missing', task: 'reports.nightly', windowSeconds: 60, ...on }),
      job_stuck: await f.createRule({ kind: 'job_stuck', task: 'tasks.import', windowSeconds: 60, ...on }),
    };
    const id = f.connection.id;
    await f.ingest([
      ...Array.from({ length: 5 }, (_, i) => jobEvent(id, T0 - 1_000, { externalId: `f-${i}`, state: 'failed', completedAt: iso(T0 - 1_000) })),
      queueEvent(id, T0, { depth: 50 }),
      workerEvent(id, T0, { state: 'online' }),
      jobEvent(id, T0, { externalId: 'stuck', name: 'tasks.import', state: 'active', startedAt: iso(T0) }),
    ]);
    await f.evaluate(); // failure_rate fires at once; queue_depth starts its window
    f.t.clock.advance(61_000);
    await f.evaluate();
    await f.sendAllDue();

    const firing = hooks.received.map((request) => signedPayload(request, secret));
    expect(firing.map((payload) => payload.rule.kind).sort()).toEqual(Object.keys(rules).sort());
    for (const payload of firing) {
      expect(payload).toMatchObject({ version: 1, event: 'alert.firing', status: 'firing', connectionId: id, resolvedAt: null });
      expect(payload.rule.id).toBe(rules[payload.rule.kind as keyof typeof rules].id);
      expect(payload.link.startsWith('https://jobwatch.example.com/')).toBe(true);
      expect(payload.link).toContain(`connectionId=${id}`);
      expect(hooks.received.find((request) => request.body.includes(payload.deliveryId))!.headers.get('x-jobwatch-delivery')).toBe(payload.deliveryId);
    }
    const byKind = Object.fromEntries(firing.map((payload) => [payload.rule.kind, payload]));
    expect(byKind.failure_rate).toMatchObject({ value: 1, unit: 'fraction', rule: { threshold: 0.5, queue: 'default', windowSeconds: 600 }, firingSince: iso(T0) });
    expect(byKind.failure_rate.link).toBe(`https://jobwatch.example.com/jobs?connectionId=${id}&state=failed&queue=default`);
    expect(byKind.queue_depth).toMatchObject({ value: 50, unit: 'jobs', rule: { threshold: 10 } });
    expect(byKind.worker_offline).toMatchObject({ value: 61, unit: 'seconds' });
    expect(byKind.task_missing).toMatchObject({ value: 61, rule: { task: 'reports.nightly' } });
    expect(byKind.job_stuck).toMatchObject({ value: 61, rule: { task: 'tasks.import' } });

    // everything recovers
    const nowMs = f.t.clock.nowMs();
    f.t.clock.advance(11 * 60_000);
    await f.ingest([
      ...Array.from({ length: 5 }, (_, i) => jobEvent(id, f.t.clock.nowMs(), { externalId: `ok-${i}`, state: 'completed', completedAt: iso(f.t.clock.nowMs()) })),
      queueEvent(id, f.t.clock.nowMs(), { depth: 0 }),
      workerEvent(id, f.t.clock.nowMs(), { state: 'heartbeat' }),
      jobEvent(id, f.t.clock.nowMs(), { externalId: 'nightly', name: 'reports.nightly', state: 'completed' }),
      jobEvent(id, f.t.clock.nowMs(), { externalId: 'stuck', name: 'tasks.import', state: 'completed' }),
    ]);
    await f.evaluate();
    await f.sendAllDue();
    const resolved = hooks.received.slice(5).map((request) => signedPayload(request, secret));
    expect(resolved.map((payload) => payload.rule.kind).sort()).toEqual(Object.keys(rules).sort());
    for (const payload of resolved) {
      expect(payload).toMatchObject({ event: 'alert.resolved', status: 'resolved', resolvedAt: iso(f.t.clock.nowMs()) });
      expect(Date.parse(payload.firingSince)).toBeLessThanOrEqual(nowMs);
    }
    // the channel's history shows ten delivered attempts; nothing waits
    const channels = await f.t.request('GET', '/api/alert-channels', { headers: { cookie: f.cookie } });
    expect(channels.json.data[0].pending).toBe(0);
    expect(channels.json.data[0].deliveries.map((attempt: { outcome: string }) => attempt.outcome)).toEqual(Array(10).fill('delivered'));
  });

  test('a slack channel gets Slack-compatible text, signed the same way', async () => {
    const hooks = receiver();
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const { channel, secret } = await f.createChannel({ url: hooks.url(), format: 'slack' });
    await f.createRule({ kind: 'failure_rate', name: 'emails <failing>', threshold: 0.2, windowSeconds: 300, channelIds: [channel.id] });
    await f.ingest(Array.from({ length: 5 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `f-${i}`, state: 'failed' })));
    await f.evaluate();
    await f.t.alertRunner.sendDue();
    const payload = signedPayload(hooks.received[0]!, secret);
    expect(Object.keys(payload)).toEqual(['text']);
    expect(payload.text).toContain(':rotating_light: *FIRING* emails &lt;failing&gt;: failure rate &gt; 20% over 5 min (was 100%)');
    expect(payload.text).toContain(`<http://localhost:3000/jobs?connectionId=${f.connection.id}&state=failed|Open in jobwatch>`);
  });

  test('a slack channel\'s test notice escapes the channel name as Slack markup requires', async () => {
    const hooks = receiver();
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const { channel } = await f.createChannel({ url: hooks.url(), format: 'slack', name: 'ops <!channel> & <https://evil.example|click>' });
    const tested = await f.t.request('POST', `/api/alert-channels/${channel.id}/test`, { headers: { cookie: f.cookie, 'content-type': 'application/json' }, rawBody: '{}' });
    expect(tested.json.attempt.outcome).toBe('delivered');
    const { text } = JSON.parse(hooks.received[0]!.body);
    expect(text).toStartWith(':white_check_mark: jobwatch test notification (test of channel ops &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;): this channel works.\n');
    // the only markup left is jobwatch's own link
    expect(text.match(/</g)).toHaveLength(1);
  });

  test('a receiver answering 500 is retried after the backoff, and the 200 that follows delivers it', async () => {
    const hooks = receiver((_request, index) => new Response(index === 0 ? 'busy' : 'ok', { status: index === 0 ? 500 : 200 }));
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const { channel } = await f.createChannel({ url: hooks.url() });
    await f.createRule({ kind: 'failure_rate', threshold: 0.2, windowSeconds: 300, channelIds: [channel.id] });
    await f.ingest(Array.from({ length: 5 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `f-${i}`, state: 'failed' })));
    await f.evaluate();
    await f.t.alertRunner.sendDue();
    expect(f.pending()[0]).toMatchObject({ attempts: 1, nextAttemptAtMs: T0 + 5_000 });
    await f.t.alertRunner.sendDue(); // not due yet: nothing sent
    expect(hooks.received).toHaveLength(1);
    f.t.clock.advance(5_000);
    await f.t.alertRunner.sendDue();
    expect(hooks.received).toHaveLength(2);
    expect(hooks.received[1]!.body).toBe(hooks.received[0]!.body); // the same delivery, byte for byte
    expect(f.pending()).toEqual([]);
    const history = f.book().history.get(channel.id)!.map(({ outcome, httpStatus, error, attempt }) => ({ outcome, httpStatus, error, attempt }));
    expect(history).toEqual([
      { outcome: 'retrying', httpStatus: 500, error: 'HTTP 500: busy', attempt: 1 },
      { outcome: 'delivered', httpStatus: 200, error: null, attempt: 2 },
    ]);
  });

  test('retries stop after the retry duration: the last failure gives the delivery up', async () => {
    const hooks = receiver(() => new Response('down', { status: 503 }));
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const { channel } = await f.createChannel({ url: hooks.url() });
    await f.createRule({ kind: 'failure_rate', threshold: 0.2, windowSeconds: 300, channelIds: [channel.id] });
    await f.ingest(Array.from({ length: 5 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `f-${i}`, state: 'failed' })));
    await f.evaluate();
    for (let attempt = 0; attempt < 40 && f.pending().length > 0; attempt++) {
      await f.t.alertRunner.sendDue();
      const next = f.pending()[0]?.nextAttemptAtMs;
      if (next !== undefined) f.t.clock.set(next);
    }
    const history = f.book().history.get(channel.id)!;
    expect(history.at(-1)).toMatchObject({ outcome: 'failed', httpStatus: 503 });
    expect(history.slice(0, -1).every((attempt) => attempt.outcome === 'retrying')).toBe(true);
    // within the hour: 5 s doubling to a 5 min cap
    expect(history.at(-1)!.atMs - T0).toBeLessThanOrEqual(3_600_000);
    expect(history.length).toBeGreaterThan(10);
  });

  test('a redirect is not followed: the delivery fails without reaching the target, and is not retried', async () => {
    const target = receiver();
    const hooks = receiver(() => new Response(null, { status: 302, headers: { location: target.url('/elsewhere') } }));
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const { channel } = await f.createChannel({ url: hooks.url() });
    const tested = await f.t.request('POST', `/api/alert-channels/${channel.id}/test`, { headers: { cookie: f.cookie, 'content-type': 'application/json' }, rawBody: '{}' });
    expect(tested.status).toBe(200);
    expect(tested.json.attempt).toMatchObject({ outcome: 'failed', httpStatus: 302, error: `redirect to ${target.url('/elsewhere')} not followed` });
    expect(target.received).toHaveLength(0);
    expect(f.pending()).toEqual([]);
  });

  test('"send a test" delivers a signed test notice at once and shows the attempt', async () => {
    const hooks = receiver();
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const { channel, secret } = await f.createChannel({ url: hooks.url(), name: 'pager' });
    const tested = await f.t.request('POST', `/api/alert-channels/${channel.id}/test`, { headers: { cookie: f.cookie, 'content-type': 'application/json' }, rawBody: '{}' });
    expect(tested.json.attempt).toMatchObject({ outcome: 'delivered', httpStatus: 204, status: 'test', attempt: 1 });
    const payload = signedPayload(hooks.received[0]!, secret);
    expect(payload).toMatchObject({ event: 'alert.test', status: 'test', deliveryId: tested.json.deliveryId, rule: { id: null, name: 'test of channel pager', kind: null } });
  });
});
