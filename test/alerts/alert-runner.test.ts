/**
 * The runner's bounds: one connection's deliveries never hold every send slot, and a
 * delivery already in flight is not started twice.
 */
import { expect, test } from 'bun:test';
import type { SendResult } from '../../actors/alerts/alert-book.ts';
import { SENDS_IN_FLIGHT_PER_CONNECTION_MAX } from '../../src/alerts/alert-runner.ts';
import { jobEvent } from '../support/events.ts';
import { T0, testShardCount } from '../support/test-app.ts';
import { shardOf } from '../../src/shards/shard-runtime.ts';
import { alertFixture } from './alert-fixture.ts';

test("a connection with many waiting deliveries holds at most its share of sends; another connection's go out meanwhile", async () => {
  const sent: string[] = [];
  const releases: Array<(result: SendResult) => void> = [];
  const f = await alertFixture({
    alerts: {
      send: (url) => {
        sent.push(url);
        return new Promise<SendResult>((resolve) => releases.push(resolve));
      },
    },
  });
  const busy = [];
  for (let index = 0; index < 6; index++) busy.push((await f.createChannel({ name: `busy ${index}`, url: `https://busy.example.com/${index}` })).channel.id);
  await f.createRule({ kind: 'failure_rate', threshold: 0.2, windowSeconds: 300, channelIds: busy });
  await f.ingest(Array.from({ length: 5 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `f-${i}`, state: 'failed' })));

  const other = await f.t.createConnection(f.cookie, 'other');
  const otherChannel = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: other.id, name: 'quiet', url: 'https://quiet.example.com/', format: 'json' }, headers: { cookie: f.cookie } });
  const otherRule = await f.t.request('POST', '/api/alert-rules', {
    body: { connectionId: other.id, name: 'missing', kind: 'task_missing', task: 'reports.nightly', windowSeconds: 10, channelIds: [otherChannel.json.channel.id] },
    headers: { cookie: f.cookie },
  });
  expect(otherRule.status).toBe(201);
  f.t.clock.advance(11_000);
  await f.t.alerts.evaluate([f.connection.id, other.id]);

  const running = f.t.alertRunner.sendDue();
  expect(sent.filter((url) => url.startsWith('https://busy.example.com/'))).toHaveLength(SENDS_IN_FLIGHT_PER_CONNECTION_MAX);
  expect(sent).toContain('https://quiet.example.com/');
  // a second pass while they are in flight starts nothing again
  void f.t.alertRunner.sendDue();
  expect(sent).toHaveLength(SENDS_IN_FLIGHT_PER_CONNECTION_MAX + 1);

  for (const release of releases.splice(0)) release({ ok: true, httpStatus: 200, error: null, retryable: false });
  await running;
  const rest = f.t.alertRunner.sendDue(); // the rest of the busy connection's
  for (const release of releases.splice(0)) release({ ok: true, httpStatus: 200, error: null, retryable: false });
  await rest;
  expect(f.pending()).toEqual([]);
  expect(sent.filter((url) => url.startsWith('https://busy.example.com/'))).toHaveLength(6);
});

/** A sender whose requests stay open until released: a receiver that never answers. */
function heldSends() {
  const sent: string[] = [];
  const releases: Array<(result: SendResult) => void> = [];
  const send = (url: string) => {
    sent.push(url);
    return new Promise<SendResult>((resolve) => releases.push(resolve));
  };
  const releaseAll = () => {
    for (const release of releases.splice(0)) release({ ok: false, httpStatus: null, error: 'no answer within 5 s', retryable: true });
  };
  return { sent, releases, send, releaseAll };
}

/** Polls until `condition` holds (the test's own timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await Bun.sleep(5);
}

const testSend = (f: Awaited<ReturnType<typeof alertFixture>>, channelId: string) =>
  f.t.request('POST', `/api/alert-channels/${channelId}/test`, { headers: { cookie: f.cookie, 'content-type': 'application/json' }, rawBody: '{}' });

test("a flood of test sends takes only its connection's slots: another connection's firing alert goes out at once", async () => {
  const held = heldSends();
  const f = await alertFixture({ alerts: { send: held.send, runnerLimits: { testTurnWaitMs: 50 } } });
  const { channel } = await f.createChannel({ name: 'silent', url: 'https://silent.example.com/' });

  const other = await f.t.createConnection(f.cookie, 'other tenant');
  const otherChannel = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: other.id, name: 'pager', url: 'https://pager.example.com/', format: 'json' }, headers: { cookie: f.cookie } });
  await f.t.request('POST', '/api/alert-rules', {
    body: { connectionId: other.id, name: 'nightly missing', kind: 'task_missing', task: 'reports.nightly', windowSeconds: 10, channelIds: [otherChannel.json.channel.id] },
    headers: { cookie: f.cookie },
  });

  let answered = 0;
  const requests = Array.from({ length: 40 }, () => testSend(f, channel.id).finally(() => answered++));
  // the refused answer at once, the one waiting for a slot after its 50 ms; the four sent wait for their receiver
  await until(() => answered === 36);
  // four in flight to the receiver that never answers; the fifth admitted waits for one of them
  expect(held.sent.filter((url) => url.includes('silent'))).toHaveLength(SENDS_IN_FLIGHT_PER_CONNECTION_MAX);

  f.t.clock.advance(11_000);
  await f.t.alerts.evaluate([f.connection.id, other.id]);
  void f.t.alertRunner.sendDue();
  expect(held.sent).toContain('https://pager.example.com/');
  expect(held.sent.filter((url) => url.includes('silent'))).toHaveLength(SENDS_IN_FLIGHT_PER_CONNECTION_MAX);

  held.releaseAll();
  const answers = await Promise.all(requests);
  held.releaseAll(); // the waiting test, started when a slot freed
  const statuses = answers.map((answer) => answer.status);
  expect(statuses.filter((status) => status === 200)).toHaveLength(5);
  expect(statuses.filter((status) => status === 429)).toHaveLength(35);
  const refused = answers.find((answer) => answer.status === 429)!;
  expect(refused.json.error.code).toBe('RATE_LIMITED');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(answers.filter((answer) => answer.status === 200 && answer.json.waiting === true)).toHaveLength(1);
});

test('a test waiting for its connection\'s slot is sent as soon as one frees, not at the next evaluation', async () => {
  const held = heldSends();
  const f = await alertFixture({ alerts: { send: held.send } });
  const { channel } = await f.createChannel({ name: 'silent', url: 'https://silent.example.com/' });
  const first = Array.from({ length: SENDS_IN_FLIGHT_PER_CONNECTION_MAX }, () => testSend(f, channel.id));
  await until(() => held.sent.length === SENDS_IN_FLIGHT_PER_CONNECTION_MAX);
  const fifth = testSend(f, channel.id);
  await until(() => f.pending().length === SENDS_IN_FLIGHT_PER_CONNECTION_MAX + 1);
  await Bun.sleep(50);
  expect(held.sent).toHaveLength(SENDS_IN_FLIGHT_PER_CONNECTION_MAX);
  held.releases.shift()!({ ok: true, httpStatus: 200, error: null, retryable: false });
  await until(() => held.sent.length === SENDS_IN_FLIGHT_PER_CONNECTION_MAX + 1);
  held.releases.at(-1)!({ ok: true, httpStatus: 204, error: null, retryable: false });
  const answer = await fifth;
  expect(answer.json).toMatchObject({ waiting: false, attempt: { outcome: 'delivered', httpStatus: 204, status: 'test' } });
  held.releaseAll();
  await Promise.all(first);
});

test('test sends are rate limited per connection: five at once, then one every 12 s', async () => {
  const f = await alertFixture({ alerts: { send: async () => ({ ok: true, httpStatus: 200, error: null, retryable: false }) } });
  const { channel } = await f.createChannel();
  for (let index = 0; index < 5; index++) expect((await testSend(f, channel.id)).status).toBe(200);
  const refused = await testSend(f, channel.id);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('12');
  expect(refused.json.error.message).toBe('too many test notices for this connection; try again in 12 s');
  expect(f.pending()).toEqual([]);
  f.t.clock.advance(12_000);
  expect((await testSend(f, channel.id)).status).toBe(200);
  expect((await testSend(f, channel.id)).status).toBe(429);
  // another connection has its own allowance
  const other = await f.t.createConnection(f.cookie, 'other');
  const otherChannel = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: other.id, name: 'x', url: 'https://x.example.com/', format: 'json' }, headers: { cookie: f.cookie } });
  expect((await testSend(f, otherChannel.json.channel.id)).status).toBe(200);
});

test('past the shared pool each connection still starts its first send, and waiting sends go to the connections with the fewest in flight', async () => {
  const held = heldSends();
  const f = await alertFixture({ alerts: { send: held.send, runnerLimits: { sendsInFlightMax: 2 } } });
  const connections = [f.connection.id];
  // the pool is one runner's: with shards (WORKERS above 1), each shard's, so the three share one
  const shards = testShardCount();
  for (let made = 0; connections.length < 3; made++) {
    const id = (await f.t.createConnection(f.cookie, `c${made}`)).id;
    if (shardOf(id, shards) === shardOf(f.connection.id, shards)) connections.push(id);
  }
  for (const [index, connectionId] of connections.entries()) {
    const channels: string[] = [];
    for (let c = 0; c < 3; c++) {
      const created = await f.t.request('POST', '/api/alert-channels', { body: { connectionId, name: `ch${c}`, url: `https://c${index}.example.com/${c}`, format: 'json' }, headers: { cookie: f.cookie } });
      channels.push(created.json.channel.id);
    }
    await f.t.request('POST', '/api/alert-rules', {
      body: { connectionId, name: 'missing', kind: 'task_missing', task: 'reports.nightly', windowSeconds: 10, channelIds: channels },
      headers: { cookie: f.cookie },
    });
  }
  f.t.clock.advance(11_000);
  await f.t.alerts.evaluate(connections);
  void f.t.alertRunner.sendDue();
  // the pool of two is full after the first two connections' first sends; the third still starts its own
  expect(held.sent.map((url) => url.slice(0, 'https://c0'.length)).sort()).toEqual(['https://c0', 'https://c1', 'https://c2']);
  held.releases.shift()!({ ok: true, httpStatus: 200, error: null, retryable: false });
  await until(() => f.book().history.size > 0);
  await Bun.sleep(10);
  void f.t.alertRunner.sendDue();
  // the connection whose send ended has none in flight: it goes next, whatever its place in the list
  expect(held.sent).toHaveLength(4);
  expect(held.sent[3]!.startsWith('https://c0')).toBe(true);
  held.releaseAll();
});
