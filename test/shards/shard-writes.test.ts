/**
 * Writes about one target with the connections on 4 shards (src/shards/shard-front.ts): a
 * job's command, a queue's and a worker's control go to the one shard keeping their target,
 * so each is written and audited once; a bulk action's ids go each to the shard of its job,
 * the results in the request's order, one audit entry per connection acted on; a write whose
 * target no shard keeps is one 404, audited once. The audit log read through the front is
 * every store's, and a backup (the combined snapshot) holds every entry once, the entries a
 * shard wrote about no connection included.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { shardOf } from '../../src/shards/shard-runtime.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { shardedTestApp } from '../support/sharded-test-app.ts';
import { T0, TEST_LIMITS, type TestApp } from '../support/test-app.ts';

const SHARDS = 4;

let t: TestApp;
let cookie: string;
/** two connections on different shards */
const on: Array<{ id: string; apiKey: string }> = [];

const jobIdOf = (connectionId: string, externalId: string): string => t.engine.connection(connectionId)!.jobs.getByExternalId(externalId)!.id;
const auditRead = async (query = '') => (await t.request('GET', `/api/audit?limit=100${query}`, { headers: { cookie } })).json;
const entriesOf = async (action: string) => (await auditRead(`&action=${action}`)).data as Array<{ connectionId: string | null; outcome: string; status: number; target: string | null }>;

beforeAll(async () => {
  t = (await shardedTestApp({ limits: { dailyEventLimit: 0 } }, SHARDS)) as unknown as TestApp;
  cookie = await t.login();
  for (let made = 0; on.length < 2; made++) {
    const created = await t.createConnection(cookie, `c${made}`);
    if (on.every((other) => shardOf(other.id, SHARDS) !== shardOf(created.id, SHARDS))) on.push(created);
  }
  for (const [index, connection] of on.entries()) {
    await t.ingest(connection.apiKey, [
      jobEvent(connection.id, T0 - 5_000, { externalId: `failed-${index}`, queue: 'emails', state: 'failed', error: 'bad address' }),
      jobEvent(connection.id, T0 - 5_000, { externalId: `failed-again-${index}`, queue: 'emails', state: 'failed', error: 'bad address' }),
      queueEvent(connection.id, T0 - 4_000, { name: 'emails', depth: 1 }),
      workerEvent(connection.id, T0 - 1_000, { externalId: `w${index}`, queues: ['emails'] }),
    ]);
  }
});

describe('writes with the connections on shards', () => {
  test("a job's command, a queue's and a worker's control reach the shard keeping their target, each written and audited once", async () => {
    const [a, b] = [on[0]!, on[1]!];
    const retried = await t.request('POST', `/api/jobs/${jobIdOf(b.id, 'failed-1')}/retry`, { headers: { cookie } });
    expect(retried.status).toBe(200);
    expect(t.engine.connection(b.id)!.jobs.getByExternalId('failed-1')!.state).toBe('retrying');

    const queueId = t.engine.connection(b.id)!.queues.get('emails')!.id;
    const paused = await t.request('POST', `/api/queues/${queueId}/pause`, { body: {}, headers: { cookie } });
    expect(paused.status).toBe(202);
    const command = await t.request('GET', `/api/commands/${paused.json.commandId}`, { headers: { cookie } });
    expect(command.json).toMatchObject({ id: paused.json.commandId, type: 'queue.pause' });

    const workerId = t.engine.connection(a.id)!.workers.get('w0')!.id;
    expect((await t.request('POST', `/api/workers/${workerId}/stop`, { body: {}, headers: { cookie } })).status).toBe(202);

    expect((await entriesOf('job.retry')).map((entry) => [entry.connectionId, entry.outcome])).toEqual([[b.id, 'success']]);
    expect((await entriesOf('queue.pause')).map((entry) => [entry.connectionId, entry.outcome])).toEqual([[b.id, 'success']]);
    expect((await entriesOf('worker.stop')).map((entry) => [entry.connectionId, entry.outcome])).toEqual([[a.id, 'success']]);
  });

  test("a bulk action over jobs on two shards answers each id in the request's order, with one audit entry per connection", async () => {
    const [a, b] = [on[0]!, on[1]!];
    const ids = [jobIdOf(b.id, 'failed-again-1'), 'no-such-job', jobIdOf(a.id, 'failed-again-0')];
    const bulk = await t.request('POST', '/api/jobs/bulk/retry', { body: { ids }, headers: { cookie } });
    expect(bulk.status).toBe(200);
    expect(bulk.json.results.map((result: { id: string; success: boolean }) => [result.id, result.success])).toEqual([
      [ids[0], true],
      [ids[1], false],
      [ids[2], true],
    ]);
    // the single retry before is b's: the bulk action adds one entry for each connection
    expect((await entriesOf('job.retry')).map((entry) => entry.connectionId).sort()).toEqual([a.id, b.id, b.id].sort());
  });

  test('a write whose target no shard keeps is one 404, audited once; a backup holds every entry of every store once', async () => {
    expect((await t.request('POST', '/api/queues/no-such-queue/resume', { body: {}, headers: { cookie } })).status).toBe(404);
    expect((await entriesOf('queue.resume')).map((entry) => [entry.connectionId, entry.status])).toEqual([[null, 404]]);

    const read = (await auditRead()).data.map((entry: { id: string }) => entry.id);
    expect(new Set(read).size).toBe(read.length);
    const snapshot = t.engine.takeSnapshot();
    const restored = new Engine({ clock: t.clock, log: inMemoryLog, limits: TEST_LIMITS });
    const restorer = restored.restorer();
    for (const chunk of snapshot.chunks) restorer.restore(chunk);
    snapshot.release();
    expect(restored.audit.toSnapshot().map(({ entry }) => entry.id).sort()).toEqual([...read].sort());
  });
});
