/**
 * A batch jobwatch refuses as a whole costs only the events it refuses: the deliverer sends
 * it again in halves until they are alone, drops those (naming each in its log) and
 * delivers the rest. Against a stand-in that refuses one marked event, to count requests
 * and see an outage in the middle of a split, and against the real jobwatch.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deliverer, eventIdentity } from '../src/deliver.js';
import { HttpClient, NetworkError } from '../src/http-client.js';
import { Spool } from '../src/spool.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, jobEvent, login, makeDataDir, removeDir, startJobwatch } from './support/jobwatch.js';

const dirs = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-bullmq-refused-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What the agent writes to stderr while `work` runs. */
async function logOf(work) {
  const lines = [];
  const write = process.stderr.write;
  process.stderr.write = (chunk) => {
    lines.push(String(chunk));
    return true;
  };
  try {
    await work();
  } finally {
    process.stderr.write = write;
  }
  return lines.join('');
}

const CONNECTION = '0190b6d6-0000-7000-8000-000000000001';
const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const events = (count) => Array.from({ length: count }, (_, n) => jobEvent(CONNECTION, T0 + n, { externalId: `mail:${n}`, name: 'send' }, { framework: 'bullmq' }));

/** Refuses (400) any body holding an event with `poison` in its extensions; `outageAt` makes that request fail as a network error. */
function refusingClient(outageAt = null) {
  const bodies = [];
  return {
    bodies,
    async request(_method, _path, body) {
      bodies.push(body);
      if (bodies.length === outageAt) throw new NetworkError('ECONNREFUSED');
      const sent = JSON.parse(body).events;
      if (sent.some((event) => event.job?.extensions?.poison)) {
        return { status: 400, body: { error: { code: 'VALIDATION_ERROR', message: 'request body must not nest more than 32 levels deep' } }, retryAfterMs: null };
      }
      return { status: 200, body: { accepted: sent.length, rejected: 0 }, retryAfterMs: null };
    }
  };
}
const deliveredIds = (bodies) => bodies.flatMap((body) => JSON.parse(body).events).map((event) => event.job.externalId);

describe('a batch refused as a whole', () => {
  test('is sent again in halves: only the refused event is dropped, named in the log, and the others are delivered', async () => {
    const client = refusingClient();
    const deliverer = new Deliverer(client, new Spool(tempDir(), 1024 * 1024), { batchSize: 1000 });
    const batch = events(96);
    batch[41].job.extensions = { poison: true };
    deliverer.submit(batch);
    const log = await logOf(() => deliverer.step());
    assert.equal(deliverer.sent, 95);
    assert.equal(deliverer.droppedRefused, 1);
    assert.deepEqual(new Set(deliveredIds(client.bodies.filter((body) => !body.includes('poison')))), new Set(batch.filter((_, n) => n !== 41).map((event) => event.job.externalId)));
    // a binary search: the whole, then one refused half per level (7 levels for 96 events), each with its sibling
    assert.ok(client.bodies.length <= 1 + 2 * 7);
    assert.ok(log.includes('jobwatch refused a batch of 96 events with 400 (VALIDATION_ERROR: request body must not nest more than 32 levels deep); sending it again in halves'));
    assert.match(log, /ERROR jobwatch_bullmq\.deliver: jobwatch refused event job_state_change mail:41 \(queued\) at 2026-11-20T10:00:00\.041Z with 400 .*dropped this event only; 1 events dropped this way since start/);
    assert.equal(deliverer.pending, 0);
  });

  test('many refused events: each is dropped alone, the log names the first ones and counts the rest', async () => {
    const client = refusingClient();
    const deliverer = new Deliverer(client, new Spool(tempDir(), 1024 * 1024), { batchSize: 1000 });
    const batch = events(60);
    for (let n = 0; n < 60; n += 2) batch[n].job.extensions = { poison: true };
    deliverer.submit(batch);
    const log = await logOf(() => deliverer.step());
    assert.equal(deliverer.sent, 30);
    assert.equal(deliverer.droppedRefused, 30);
    assert.equal(log.match(/dropped this event only/g)?.length, 20);
    assert.ok(log.includes('... and 10 more events of the batch refused and dropped'));
  });

  test('an outage in the middle of a split leaves the whole batch in the spool; sent again, only the refused event is dropped', async () => {
    const client = refusingClient(3); // the whole (refused), its first half (refused), then the network is gone
    const spool = new Spool(tempDir(), 1024 * 1024);
    const deliverer = new Deliverer(client, spool, { batchSize: 1000 });
    const batch = events(8);
    batch[1].job.extensions = { poison: true };
    deliverer.submit(batch);
    await logOf(() => deliverer.step());
    assert.equal(spool.events, 8);
    assert.equal(deliverer.droppedRefused, 0);
    deliverer.retryAt = 0;
    await logOf(() => deliverer.step());
    assert.equal(spool.events, 0);
    assert.equal(deliverer.droppedRefused, 1);
    assert.deepEqual(new Set(deliveredIds(client.bodies.filter((body) => !body.includes('poison')))), new Set(batch.filter((_, n) => n !== 1).map((event) => event.job.externalId)));
  });

  test('events rejected one by one in a 200 answer are named and never sent again', async () => {
    const client = {
      calls: 0,
      async request(_method, _path, body) {
        this.calls += 1;
        const count = JSON.parse(body).events.length;
        return { status: 200, body: { accepted: count - 1, rejected: 1, errors: [{ index: 2, code: 'VALIDATION_ERROR', message: 'job.name too long' }] }, retryAfterMs: null };
      }
    };
    const deliverer = new Deliverer(client, new Spool(tempDir(), 1024 * 1024));
    deliverer.submit(events(4));
    const log = await logOf(async () => {
      await deliverer.step();
      await deliverer.step();
    });
    assert.equal(client.calls, 1);
    assert.ok(log.includes('jobwatch rejected event job_state_change mail:2 (queued) at 2026-11-20T10:00:00.002Z: VALIDATION_ERROR job.name too long'));
  });

  test('an event is named by its type, id, state and time', () => {
    assert.equal(eventIdentity(JSON.stringify(events(1)[0])), 'event job_state_change mail:0 (queued) at 2026-11-20T10:00:00.000Z');
    assert.equal(eventIdentity('{"type":"queue_snapshot","timestamp":"t","queue":{"name":"mail","depth":1}}'), 'event queue_snapshot mail at t');
    assert.equal(eventIdentity('not json'), 'an event (not json)');
  });
});

describe('against the real jobwatch', () => {
  let service;
  let dataDir;
  let cookie;
  let connection;

  before(async () => {
    dataDir = makeDataDir('bullmq-refused');
    service = await startJobwatch({ dataDir });
    cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    connection = await createConnection(service.baseUrl, cookie, 'refused');
  }, { timeout: 60_000 });

  after(async () => {
    await service?.stop();
    removeDir(dataDir);
  });

  test('an event nested past the body limit (not bounded by the agent, as an older agent sent it) costs only itself among 96', { timeout: 60_000 }, async () => {
    let nested = 1;
    for (let level = 0; level < 40; level++) nested = [nested];
    const batch = Array.from({ length: 96 }, (_, n) =>
    jobEvent(connection.id, T0 + n, { externalId: `bulk:${n}`, name: 'bulk-job', queue: 'bulk', state: 'completed', extensions: n === 50 ? { progress: nested } : {} }, { framework: 'bullmq' })
    );
    const deliverer = new Deliverer(new HttpClient(service.baseUrl, connection.apiKey), new Spool(tempDir(), 1024 * 1024));
    deliverer.submit(batch);
    const log = await logOf(() => deliverer.step());
    const listed = await getJson(service.baseUrl, '/api/jobs?framework=bullmq&state=completed&limit=100', cookie);
    const ids = new Set(listed.body.data.map((job) => job.externalId));
    assert.equal(ids.size, 95);
    assert.equal(ids.has('bulk:50'), false);
    // refused as a whole and split (today's service), or rejected alone (a service that checks nesting per event): named either way
    assert.match(log, /jobwatch (refused|rejected) event job_state_change bulk:50 \(completed\) at 2026-11-20T10:00:00\.050Z/);
  });
});
