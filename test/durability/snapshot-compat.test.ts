/**
 * A snapshot written by the previous version (before queue retention and daily byte
 * budgets) still loads: fields it lacks get documented defaults. A format this version does
 * not know is refused by its number, never misread.
 */
import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { QueueMetrics } from '../../actors/metrics/queue-metrics.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 10, retentionMs: 86_400_000 };

function previousVersionChunks(takenAtMs: number) {
  const queue = { id: 'queue-id', connectionId: 'c1', name: 'mail', framework: 'celery', depth: 3, consumers: null, lastSnapshotMs: T0 - 5 * 86_400_000, createdAtMs: T0 - 5 * 86_400_000, metrics: new QueueMetrics().toSnapshot() };
  return [
    { k: 'header', version: 1, takenAtMs },
    { k: 'accounts', data: new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS }).accounts.toSnapshot() },
    { k: 'connection', id: 'c1', quota: { day: Math.floor(takenAtMs / 86_400_000), used: 7 }, dedupKeys: [], workers: [], queues: [queue], commands: [] },
    { k: 'end' },
  ];
}

describe('snapshot of the previous version', () => {
  test('loads: queues without lastSeenMs count as seen when it was taken (a full retention window), a quota without bytes counts 0', () => {
    const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
    const restorer = engine.restorer();
    for (const chunk of previousVersionChunks(T0)) restorer.restore(chunk);
    const actor = engine.connection('c1')!;
    expect(actor.queues.get('mail')?.lastSeenMs).toBe(T0);
    // Its quota has no byte count: today's bytes count from the upgrade on.
    expect(actor.quota.usage(T0).used).toBe(7);
    expect(actor.quota.bytesUsed(T0)).toBe(0);
    engine.evolve({ t: 'retention', atMs: T0 + 86_400_000 - 1 });
    expect(actor.queues.size).toBe(1);
    engine.evolve({ t: 'retention', atMs: T0 + 86_400_000 + 1 });
    expect(actor.queues.size).toBe(0);
  });

  test("a format this version does not read (a later version's) is refused by name before anything loads", () => {
    const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
    expect(() => engine.restorer().restore({ k: 'header', version: 11, takenAtMs: T0 })).toThrow('snapshot format version 11 is not supported (expected one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)');
  });
});
