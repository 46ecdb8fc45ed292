/**
 * The agent's durable parts without Redis: the spool keeps whole batches within its bound,
 * checkpoints survive a restart and never move back, the deliverer moves a checkpoint only
 * once the events before it are delivered or spooled, and the gap rule of a trimmed stream.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Checkpoints } from '../../../agents/bullmq/src/checkpoint.js';
import { Deliverer } from '../../../agents/bullmq/src/deliver.js';
import { streamGap } from '../../../agents/bullmq/src/event-reader.js';
import { NetworkError } from '../../../agents/bullmq/src/http-client.js';
import { Spool } from '../../../agents/bullmq/src/spool.js';
import { agentAddress, parseWorkerClients, workerHostname } from '../../../agents/bullmq/src/workers.js';
import { queueOfKey } from '../../../agents/bullmq/src/discover.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-bullmq-unit-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A jobwatch that answers as told: 'down' throws like an unreachable host. */
function fakeClient(answers: Array<'ok' | 'down' | 500>) {
  const bodies: string[] = [];
  return {
    bodies,
    async request(_method: string, _path: string, body: string) {
      const answer = answers.shift() ?? 'ok';
      if (answer === 'down') throw new NetworkError('ECONNREFUSED');
      bodies.push(body);
      if (answer === 500) return { status: 500, body: { error: { code: 'INTERNAL_ERROR', message: 'x' } }, retryAfterMs: null };
      return { status: 200, body: { accepted: JSON.parse(body).events.length }, retryAfterMs: null };
    },
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
    expect(again.events).toBe(3);
    expect(readdirSync(dir).some((name) => name.endsWith('.tmp'))).toBe(false);
    const oldest = again.oldest()!;
    expect(oldest.events).toEqual(['{"n":1}', '{"n":2}']);
    again.remove(oldest.sequence);
    expect(again.oldest()!.events).toEqual(['{"n":3}']);
  });

  test('past its bound the oldest batches are dropped and counted', () => {
    const spool = new Spool(tempDir(), 40);
    for (let index = 0; index < 5; index++) spool.append([`{"n":${index},"pad":"xxxxxxxx"}`]);
    expect(spool.bytes).toBeLessThanOrEqual(40);
    expect(spool.droppedEvents).toBeGreaterThan(0);
    expect(spool.oldest()!.events[0]).toContain('"n":4');
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
    expect(again.get('mail')).toBe('100-0');
    expect(again.get('reports')).toBe('5-1');
    expect(new Checkpoints(dir, 'other').get('mail')).toBeNull();
  });

  test('an unreadable file means starting over, not a crash', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'checkpoints-bull.json'), '{not json');
    expect(new Checkpoints(dir, 'bull').get('mail')).toBeNull();
  });
});

describe('deliverer', () => {
  test('a checkpoint moves only once the events before it are delivered', async () => {
    const client = fakeClient(['down', 'ok']);
    const marks: string[] = [];
    const deliverer = new Deliverer(client as any, new Spool(tempDir(), 1024 * 1024), { onDurable: (list: any[]) => marks.push(...list.map((m) => m.id)) });
    deliverer.submit([{ a: 1 }], { queue: 'q', id: '1-0' });
    expect(marks).toEqual([]);
    await deliverer.step(); // jobwatch down: spooled, which is durable too
    expect(deliverer.spool.events).toBe(1);
    expect(marks).toEqual(['1-0']);
    deliverer.retryAt = 0;
    deliverer.submit([{ a: 2 }], { queue: 'q', id: '2-0' });
    await deliverer.step();
    expect(marks).toEqual(['1-0', '2-0']);
    expect(client.bodies.map((body) => JSON.parse(body).events)).toEqual([[{ a: 1 }], [{ a: 2 }]]);
  });

  test('one batch in flight: order is kept across an outage, spooled events go first, then what came after', async () => {
    const client = fakeClient(['down']);
    const deliverer = new Deliverer(client as any, new Spool(tempDir(), 1024 * 1024), { batchSize: 2, batchesInFlight: 1 });
    deliverer.submit([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await deliverer.step();
    deliverer.submit([{ n: 4 }]);
    deliverer.retryAt = 0;
    await deliverer.step();
    await deliverer.step();
    const sent = client.bodies.flatMap((body) => JSON.parse(body).events.map((event: any) => event.n));
    expect(sent).toEqual([1, 2, 3, 4]);
    expect(deliverer.pending).toBe(0);
  });

  test('several batches in flight: one that fails is spooled and the checkpoint never passes it before it is on disk', async () => {
    const client = fakeClient(['down', 'ok']);
    const marks: string[] = [];
    const spool = new Spool(tempDir(), 1024 * 1024);
    const deliverer = new Deliverer(client as any, spool, { batchSize: 1, batchesInFlight: 2, onDurable: (list: any[]) => marks.push(...list.map((m) => m.id)) });
    deliverer.submit([{ n: 1 }], { queue: 'q', id: '1-0' });
    deliverer.submit([{ n: 2 }], { queue: 'q', id: '2-0' });
    await deliverer.step();
    expect(client.bodies.map((body) => JSON.parse(body).events[0].n)).toEqual([2]);
    expect(spool.events).toBe(1);
    expect(marks).toEqual(['1-0', '2-0']);
  });

  test('a step that fails unexpectedly does not stop delivery', async () => {
    let calls = 0;
    const client = {
      async request(_method: string, _path: string, body: string) {
        calls += 1;
        if (calls === 1) throw new TypeError('a bug');
        return { status: 200, body: { accepted: JSON.parse(body).events.length }, retryAfterMs: null };
      },
    };
    const deliverer = new Deliverer(client as any, new Spool(tempDir(), 1024 * 1024));
    deliverer.submit([{ n: 1 }]);
    await expect(deliverer.step()).rejects.toThrow('a bug');
    deliverer.submit([{ n: 2 }]);
    await deliverer.step();
    expect(deliverer.sent).toBe(1);
  });

  test('a spool the disk refuses keeps the events in memory and the checkpoint where it was', async () => {
    const dir = tempDir();
    const spool = new Spool(join(dir, 'batches'), 1024 * 1024);
    rmSync(join(dir, 'batches'), { recursive: true });
    const marks: string[] = [];
    const deliverer = new Deliverer(fakeClient(['down']) as any, spool, { onDurable: (list: any[]) => marks.push(...list.map((m) => m.id)) });
    deliverer.submit([{ a: 1 }], { queue: 'q', id: '1-0' });
    await deliverer.step();
    expect(marks).toEqual([]);
    expect(deliverer.memoryEvents).toBe(1);
  });
});

describe('stream gap', () => {
  const info = (fields: Record<string, unknown>) => Object.entries(fields).flat();
  test('the oldest entry at or before the checkpoint: no gap, whatever was trimmed before it', () => {
    expect(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '60-0')).toBeNull();
    expect(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '51-0')).toBeNull();
  });
  test('entries lost and the oldest past the checkpoint: a gap', () => {
    expect(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '40-0')).toEqual({ since: '40-0', oldest: '51-0' });
    expect(streamGap(info({ length: 10, 'entries-added': 50, 'first-entry': ['51-0', []] }), '0-0')).not.toBeNull();
    expect(streamGap(info({ 'first-entry': ['60-0', []] }), '40-0')).not.toBeNull(); // before Redis 7: no entries-added
  });
  test('a stream that never lost an entry has no gap, wherever its oldest entry is', () => {
    expect(streamGap(info({ length: 3, 'entries-added': 3, 'first-entry': ['51-0', []] }), '0-0')).toBeNull();
  });
  test('a stream gone after something was read is a gap; one never read is not', () => {
    expect(streamGap(null, '40-0')).toEqual({ since: '40-0', oldest: null });
    expect(streamGap(null, '0-0')).toBeNull();
  });
});

describe('worker connections and queue keys', () => {
  test('BullMQ worker connections are found in CLIENT LIST; QueueEvents and other clients are not', () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const list = [
      `id=3 addr=10.0.0.5:5100 laddr=x fd=8 name=bull:${b64('mail')} age=9 idle=0 cmd=bzpopmin`,
      `id=4 addr=10.0.0.6:5101 fd=9 name=bull:${b64('mail')}:w:billing-1 age=3 idle=1 cmd=bzpopmin`,
      `id=5 addr=10.0.0.6:5102 fd=9 name=bull:${b64('mail')}:qe age=3 idle=1`,
      `id=6 addr=10.0.0.7:5103 fd=9 name=other:${b64('mail')} age=3 idle=1`,
      'id=7 addr=10.0.0.7:5104 fd=9 name= age=3 idle=1',
    ].join('\n');
    expect(parseWorkerClients(list, 'bull')).toEqual([
      { clientId: '3', addr: '10.0.0.5:5100', queue: 'mail', workerName: null, ageS: 9, idleS: 0 },
      { clientId: '4', addr: '10.0.0.6:5101', queue: 'mail', workerName: 'billing-1', ageS: 3, idleS: 1 },
    ]);
  });
  test("a worker's host is the address it connects from, or this machine's name when it and the agent both reach Redis over loopback", () => {
    const list = [
      'id=3 addr=127.0.0.1:5100 laddr=127.0.0.1:6379 fd=8 name=bull:bWFpbA== age=9 idle=0',
      'id=9 addr=127.0.0.1:5200 laddr=127.0.0.1:6379 fd=10 name=jobwatch-bullmq:bull:reader age=9 idle=0',
    ].join('\n');
    expect(agentAddress(list, 'jobwatch-bullmq:bull:reader')).toBe('127.0.0.1:5200');
    expect(agentAddress(list, 'jobwatch-bullmq:other:reader')).toBeNull();
    expect(agentAddress(list, '')).toBeNull();
    // the agent over loopback: a loopback worker runs on this machine
    expect(workerHostname('127.0.0.1:5100', '127.0.0.1:5200', 'app-1')).toBe('app-1');
    expect(workerHostname('::1:5100', '::1:5200', 'app-1')).toBe('app-1');
    // a worker on another machine keeps its address; so does a loopback one when the agent is elsewhere (it is Redis's machine, not ours)
    expect(workerHostname('10.0.0.6:5101', '127.0.0.1:5200', 'app-1')).toBe('10.0.0.6');
    expect(workerHostname('127.0.0.1:5100', '10.0.0.9:5200', 'app-1')).toBe('127.0.0.1');
    expect(workerHostname('127.0.0.1:5100', null, 'app-1')).toBe('127.0.0.1');
    expect(workerHostname('', null, 'app-1')).toBe('unknown');
  });
  test('queue names come from `<prefix>:<queue>:<suffix>` keys only', () => {
    expect(queueOfKey('bull:mail:meta', 'bull', 'meta')).toBe('mail');
    expect(queueOfKey('my:prefix:mail:events', 'my:prefix', 'events')).toBe('mail');
    expect(queueOfKey('bull:mail:42:meta', 'bull', 'meta')).toBeNull();
    expect(queueOfKey('bullx:mail:meta', 'bull', 'meta')).toBeNull();
  });
});

describe('stream ids', () => {
  test('compared as Redis orders them: milliseconds first, then the sequence, as numbers', async () => {
    const { compareStreamIds } = await import('../../../agents/bullmq/src/limits.js');
    expect(compareStreamIds('9-5', '10-0')).toBe(-1);
    expect(compareStreamIds('10-10', '10-9')).toBe(1);
    expect(compareStreamIds('10-3', '10-3')).toBe(0);
    expect(compareStreamIds('1800000000000-0', '0-0')).toBe(1);
  });
});
