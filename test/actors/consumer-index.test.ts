import { describe, expect, test } from 'bun:test';
import { ConsumerIndex } from '../../actors/connection/consumer-index.ts';
import { HEARTBEAT_TIMEOUT_MS, WorkerStore } from '../../actors/connection/worker-store.ts';
import type { WorkerEvent } from '../../actors/ingest/normalized-event.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
let ids = 0;
const event = (externalId: string, atMs: number, fields: Partial<WorkerEvent> = {}): WorkerEvent => ({
  kind: 'worker',
  atMs,
  framework: 'celery',
  externalId,
  hostname: 'host',
  state: 'online',
  newWorkerId: `id-${++ids}`,
  ...fields,
});

describe('ConsumerIndex', () => {
  test('given a worker moved between queue lists, when read, then it is listed only under its current queues', () => {
    const index = new ConsumerIndex<string>();
    index.update('w1', [], ['a', 'b']);
    index.update('w2', [], ['b']);
    expect([...index.workersOf('b')].sort()).toEqual(['w1', 'w2']);
    index.update('w1', ['a', 'b'], ['c']);
    expect([...index.workersOf('a')]).toEqual([]);
    expect([...index.workersOf('b')]).toEqual(['w2']);
    expect([...index.workersOf('c')]).toEqual(['w1']);
    expect(index.queueCount).toBe(2);
  });

  test('given a list naming a queue twice, then the worker counts once and one removal clears it', () => {
    const index = new ConsumerIndex<string>();
    index.update('w1', [], ['a', 'a']);
    expect(index.workersOf('a').size).toBe(1);
    index.update('w1', ['a', 'a'], []);
    expect(index.workersOf('a').size).toBe(0);
    expect(index.queueCount).toBe(0);
  });
});

describe('WorkerStore consumers', () => {
  test('given workers listing queues, then consumersOf counts those not offline, following list changes and deletes', () => {
    const store = new WorkerStore();
    store.applyEvent('c', event('w1', T0, { queues: ['mail', 'default'] }));
    store.applyEvent('c', event('w2', T0, { queues: ['mail'] }));
    store.applyEvent('c', event('w3', T0, { queues: ['mail'], state: 'offline' }));
    expect(store.consumersOf('mail', T0)).toBe(2);
    expect(store.consumersOf('default', T0)).toBe(1);

    // A newer event replaces w1's list; an older one does not.
    store.applyEvent('c', event('w1', T0 + 1, { queues: ['default'] }));
    expect(store.consumersOf('mail', T0 + 1)).toBe(1);
    store.applyEvent('c', event('w1', T0 - 5, { queues: ['mail'] }));
    expect(store.consumersOf('mail', T0 + 1)).toBe(1);

    // Past the heartbeat timeout nobody consumes; a deleted worker is gone from the index.
    expect(store.consumersOf('default', T0 + 1 + HEARTBEAT_TIMEOUT_MS + 1)).toBe(0);
    store.delete(store.get('w1')!);
    expect(store.consumersOf('default', T0 + 1)).toBe(0);
    expect(store.listing('default').size).toBe(0);
  });

  test('given workers inserted from a snapshot, then they are indexed', () => {
    const source = new WorkerStore();
    const worker = source.applyEvent('c', event('w1', T0, { queues: ['mail'] }));
    const restored = new WorkerStore();
    restored.insert({ ...worker });
    expect(restored.consumersOf('mail', T0)).toBe(1);
  });
});
