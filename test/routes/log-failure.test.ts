import { describe, expect, test } from 'bun:test';
import { T0, testApp, testShardCount, type TestApp } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';

/** A log whose appends succeed until `failing` is set, then reject like a failed fsync. */
function switchableLog() {
  const state = { failing: false };
  return {
    state,
    log: { append: async () => (state.failing ? Promise.reject(new Error('fdatasync: EIO')) : 0) },
  };
}

describe('a log that cannot be written', () => {
  test('the request is not acknowledged (503), the engine halts, and every later write and health say so', async () => {
    const { state, log } = switchableLog();
    const t: TestApp = await testApp({ log });
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    state.failing = true;
    const failed = await t.ingest(c.apiKey, [jobEvent(c.id, T0)]);
    expect(failed.status).toBe(503);
    expect(failed.json.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(t.halts).toHaveLength(1);
    state.failing = false; // even if the disk recovers, memory now holds what the log does not
    expect((await t.ingest(c.apiKey, [jobEvent(c.id, T0, { externalId: 'other' })])).status).toBe(503);
    // one engine halts whole; of shards only the one whose log failed does, and the accounts go on
    const otherWrite = await t.request('POST', '/api/connections', { body: { name: 'x' }, headers: { cookie } });
    expect(otherWrite.status).toBe(testShardCount() > 1 ? 201 : 503);
    const health = await t.request('GET', '/api/health');
    expect(health.status).toBe(503);
    expect(health.json.status).toBe('unavailable');
    if (testShardCount() > 1) expect(health.json.shards.filter((shard: { state: string }) => shard.state === 'halted')).toHaveLength(1);
  });
});
