/**
 * The runner's bounds: one connection's deliveries never hold every send slot, and a
 * delivery already in flight is not started twice.
 */
import { expect, test } from 'bun:test';
import type { SendResult } from '../../actors/alerts/alert-book.ts';
import { SENDS_IN_FLIGHT_PER_CONNECTION_MAX } from '../../src/alerts/alert-runner.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
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
