/**
 * The agent's durable parts without Redis: the spool keeps whole batches within its bound,
 * checkpoints survive a restart and never move back, the deliverer moves a checkpoint only
 * once the events before it are delivered or spooled, and the gap rule of a trimmed stream.
 */
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Checkpoints } from '../src/checkpoint.js';
import { Deliverer } from '../src/deliver.js';
import { streamGap } from '../src/event-reader.js';
import { NetworkError } from '../src/http-client.js';
import { Spool } from '../src/spool.js';
import { agentAddress, parseWorkerClients, workerHostname } from '../src/workers.js';
import { queueOfKey } from '../src/discover.js';

const dirs = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-bullmq-unit-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A jobwatch that answers as told: 'down' throws like an unreachable host. */
function fakeClient(answers) {
  const bodies = [];
  return {
    bodies,
    async request(_method, _path, body) {
      const answer = answers.shift() ?? 'ok';
      if (answer === 'down') throw new NetworkError('ECONNREFUSED');
      bodies.push(body);
      if (answer === 500) return { status: 500, body: { error: { code: 'INTERNAL_ERROR', message: 'x' } }, retryAfterMs: null };
      return { status: 200, body: { accepted: JSON.parse(body).events.length }, retryAfterMs: null };
    }
  };
}

describe('spool', () => {
  test('batches come back oldest first after a restart; a half-written file is discarded', () => {
    const dir = tempDir();
    const spool = new Spool(dir, 1024 * 1024);
    spool.append(['{"n":1}', '{"n":2}']);
    spool.append(['{"n":3}']);
    writeFileSync(join(dir, '000000000009-1.json.tmp'), '[{"n"');
    const again = new Spool(dir, 1024 * 1024);
    assert.equal(again.events, 3);
    assert.equal(readdirSync(dir).some((name) => name.endsWith('.tmp')), false);
    const oldest = again.oldest();
    assert.deepEqual(oldest.events, ['{"n":1}', '{"n":2}']);
    again.remove(oldest.sequence);
    assert.deepEqual(again.oldest().events, ['{"n":3}']);
  });

  test('past its bound the oldest batches are dropped and counted', () => {
    const spool = new Spool(tempDir(), 40);
    for (let index = 0; index < 5; index++) spool.append([`{"n":${index},"pad":"xxxxxxxx"}`]);
    assert.ok(spool.bytes <= 40);
    assert.ok(spool.droppedEvents > 0);
    assert.ok(spool.oldest().events[0].includes('"n":4'));
  });
});

describe('checkpoints', () => {
  test('saved atomically, read back after a restart, never moved back', async () => {
    const dir = tempDir();
    const first = new Checkpoints(dir, 'bull');
    first.advance('mail', '100-0');
    first.advance('mail', '99-5');
    first.advance('reports', '5-1');
    await first.save();
    const again = new Checkpoints(dir, 'bull');
    assert.equal(again.get('mail'), '100-0');
    assert.equal(again.get('reports'), '5-1');
    assert.equal(new Checkpoints(dir, 'other').get('mail'), null);
  });

  test('an unreadable file means starting over, not a crash', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'checkpoints-bull.json'), '{not json');
    assert.equal(new Checkpoints(dir, 'bull').get('mail'), null);
  });
});

describe('deliverer', () => {
  test('a checkpoint moves only once the events before it are delivered', async () => {
    const client = fakeClient(['down', 'ok']);
    const marks = [];
    const deliverer = new Deliverer(client, new Spool(tempDir(), 1024 * 1024), { onDurable: (list) => marks.push(...list.map((m) => m.id)) });
    deliverer.submit([{ a: 1 }], { queue: 'q', id: '1-0' });
    assert.deepEqual(marks, []);
    await deliverer.step(); // jobwatch down: spooled, which is durable too
    assert.equal(deliverer.spool.events, 1);
    assert.deepEqual(marks, ['1-0']);
    deliverer.retryAt = 0;
    deliverer.submit([{ a: 2 }], { queue: 'q', id: '2-0' });
    await deliverer.step();
    assert.deepEqual(marks, ['1-0', '2-0']);
    assert.deepEqual(client.bodies.map((body) => JSON.parse(body).events), [[{ a: 1 }], [{ a: 2 }]]);
  });

  test('one batch in flight: order is kept across an outage, spooled events go first, then what came after', async () => {
    const client = fakeClient(['down']);
    const deliverer = new Deliverer(client, new Spool(tempDir(), 1024 * 1024), { batchSize: 2, batchesInFlight: 1 });
    deliverer.submit([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await deliverer.step();
    deliverer.submit([{ n: 4 }]);
    deliverer.retryAt = 0;
    await deliverer.step();
    await deliverer.step();
    const sent = client.bodies.flatMap((body) => JSON.parse(body).events.map((event) => event.n));
    assert.deepEqual(sent, [1, 2, 3, 4]);
    assert.equal(deliverer.pending, 0);
  });

  test('several batches in flight: one that fails is spooled and the checkpoint never passes it before it is on disk', async () => {
    const client = fakeClient(['down', 'ok']);
    const marks = [];
    const spool = new Spool(tempDir(), 1024 * 1024);
    const deliverer = new Deliverer(client, spool, { batchSize: 1, batchesInFlight: 2, onDurable: (list) => marks.push(...list.map((m) => m.id)) });
    deliverer.submit([{ n: 1 }], { queue: 'q', id: '1-0' });
    deliverer.submit([{ n: 2 }], { queue: 'q', id: '2-0' });
    await deliverer.step();
    assert.deepEqual(client.bodies.map((body) => JSON.parse(body).events[0].n), [2]);
    assert.equal(spool.events, 1);
    assert.deepEqual(marks, ['1-0', '2-0']);
  });

  test('a step that fails unexpectedly does not stop delivery', async () => {
    let calls = 0;
    const client = {
      async request(_method, _path, body) {
        calls += 1;
        if (calls === 1) throw new TypeError('a bug');
        return { status: 200, body: { accepted: JSON.parse(body).events.length }, retryAfterMs: null };
      }
    };
    const deliverer = new Deliverer(client, new Spool(tempDir(), 1024 * 1024));
    deliverer.submit([{ n: 1 }]);
    await assert.rejects(deliverer.step(), { message: 'a bug' });
    deliverer.submit([{ n: 2 }]);
    await deliverer.step();
    assert.equal(deliverer.sent, 1);
  });

  test('a spool the disk refuses keeps the events in memory and the checkpoint where it was', async () => {
    const dir = tempDir();
    const spool = new Spool(join(dir, 'batches'), 1024 * 1024);
    rmSync(join(dir, 'batches'), { recursive: true });
    const marks = [];
    const deliverer = new Deliverer(fakeClient(['down']), spool, { onDurable: (list) => marks.push(...list.map((m) => m.id)) });
    deliverer.submit([{ a: 1 }], { queue: 'q', id: '1-0' });
    await deliverer.step();
    assert.deepEqual(marks, []);
    assert.equal(deliverer.memoryEvents, 1);
  });
});

describe('stream gap', () => {
  const info = (fields) => Object.entries(fields).flat();
  test('the oldest entry at or before the checkpoint: no gap, whatever was trimmed before it', () => {
    assert.equal(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '60-0'), null);
    assert.equal(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '51-0'), null);
  });
  test('entries lost and the oldest past the checkpoint: a gap', () => {
    assert.deepEqual(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '40-0'), { since: '40-0', oldest: '51-0' });
    assert.notEqual(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '0-0'), null);
    assert.notEqual(streamGap(info({ 'first-entry': ['60-0', []] }), '40-0'), null); // before Redis 7: no entries-added
  });
  test('a stream that never lost an entry has no gap, wherever its oldest entry is', () => {
    assert.equal(streamGap(info({ length: 3, 'entries-added': 3, 'first-entry': ['51-0', []] }), '0-0'), null);
  });
  test('a stream gone after something was read is a gap; one never read is not', () => {
    assert.deepEqual(streamGap(null, '40-0'), { since: '40-0', oldest: null });
    assert.equal(streamGap(null, '0-0'), null);
  });
});

describe('worker connections and queue keys', () => {
  test('BullMQ worker connections are found in CLIENT LIST; QueueEvents and other clients are not', () => {
    const b64 = (text) => Buffer.from(text).toString('base64');
    const list = [
    `id=3 addr=10.0.0.5:5100 laddr=x fd=8 name=bull:${b64('mail')} age=9 idle=0 cmd=bzpopmin`,
    `id=4 addr=10.0.0.6:5101 fd=9 name=bull:${b64('mail')}:w:billing-1 age=3 idle=1 cmd=bzpopmin`,
    `id=5 addr=10.0.0.6:5102 fd=9 name=bull:${b64('mail')}:qe age=3 idle=1`,
    `id=6 addr=10.0.0.7:5103 fd=9 name=other:${b64('mail')} age=3 idle=1`,
    'id=7 addr=10.0.0.7:5104 fd=9 name= age=3 idle=1'].
    join('\n');
    assert.deepEqual(parseWorkerClients(list, 'bull'), [
    { clientId: '3', addr: '10.0.0.5:5100', queue: 'mail', workerName: null, ageS: 9, idleS: 0 },
    { clientId: '4', addr: '10.0.0.6:5101', queue: 'mail', workerName: 'billing-1', ageS: 3, idleS: 1 }]
    );
  });
  test("a worker's host is the address it connects from, or this machine's name when it and the agent both reach Redis over loopback", () => {
    const list = [
    'id=3 addr=127.0.0.1:5100 laddr=127.0.0.1:6379 fd=8 name=bull:bWFpbA== age=9 idle=0',
    'id=9 addr=127.0.0.1:5200 laddr=127.0.0.1:6379 fd=10 name=jobwatch-bullmq:bull:reader age=9 idle=0'].
    join('\n');
    assert.equal(agentAddress(list, 'jobwatch-bullmq:bull:reader'), '127.0.0.1:5200');
    assert.equal(agentAddress(list, 'jobwatch-bullmq:other:reader'), null);
    assert.equal(agentAddress(list, ''), null);
    // the agent over loopback: a loopback worker runs on this machine
    assert.equal(workerHostname('127.0.0.1:5100', '127.0.0.1:5200', 'app-1'), 'app-1');
    assert.equal(workerHostname('::1:5100', '::1:5200', 'app-1'), 'app-1');
    // a worker on another machine keeps its address; so does a loopback one when the agent is elsewhere (it is Redis's machine, not ours)
    assert.equal(workerHostname('10.0.0.6:5101', '127.0.0.1:5200', 'app-1'), '10.0.0.6');
    assert.equal(workerHostname('127.0.0.1:5100', '10.0.0.9:5200', 'app-1'), '127.0.0.1');
    assert.equal(workerHostname('127.0.0.1:5100', null, 'app-1'), '127.0.0.1');
    assert.equal(workerHostname('', null, 'app-1'), 'unknown');
  });
  test('queue names come from `<prefix>:<queue>:<suffix>` keys only', () => {
    assert.equal(queueOfKey('bull:mail:meta', 'bull', 'meta'), 'mail');
    assert.equal(queueOfKey('my:prefix:mail:events', 'my:prefix', 'events'), 'mail');
    assert.equal(queueOfKey('bull:mail:42:meta', 'bull', 'meta'), null);
    assert.equal(queueOfKey('bullx:mail:meta', 'bull', 'meta'), null);
  });
});

describe('stream ids', () => {
  test('compared as Redis orders them: milliseconds first, then the sequence, as numbers', async () => {
    const { compareStreamIds } = await import('../src/limits.js');
    assert.equal(compareStreamIds('9-5', '10-0'), -1);
    assert.equal(compareStreamIds('10-10', '10-9'), 1);
    assert.equal(compareStreamIds('10-3', '10-3'), 0);
    assert.equal(compareStreamIds('1800000000000-0', '0-0'), 1);
  });
});
