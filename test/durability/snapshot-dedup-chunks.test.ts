/**
 * A connection's dedup keys (100,000 by default) are written in slices of their own: as
 * one chunk they took 40-60 ms to encode at 1M jobs, a stall for every request waiting.
 */
import { expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { DEDUP_KEYS_PER_CHUNK, SNAPSHOT_FORMAT_VERSION, type SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

const KEYS = 2 * DEDUP_KEYS_PER_CHUNK + 123;
const LIMITS = { dailyEventLimit: 0, dedupKeysMax: KEYS + 10, maxJobsPerConnection: 1_000, retentionMs: 86_400_000 };

test('given more dedup keys than one chunk holds, the snapshot slices them in order and a restore gives the same keys in the same eviction order', async () => {
  const clock = new ManualClock(T0);
  const engine = new Engine({ clock, log: inMemoryLog, limits: LIMITS });
  const admin = await new AccountService(engine, 86_400_000, 'secret-for-tests').addUser('admin@example.com', 'a long password!', true);
  const { connection, apiKey } = await new ConnectionService(engine).create(await withOwnTeam(engine, admin), 'prod', undefined);
  for (let start = 0; start < KEYS; start += 1_000) {
    const events = [];
    for (let i = start; i < Math.min(KEYS, start + 1_000); i++) events.push(jobEvent(connection.id, T0 - 60_000 + (i % 50_000), { externalId: `job-${i % 500}`, name: `tasks.t${i}` }));
    await ingestEvents(engine, apiKey, events);
  }
  const live = engine.connection(connection.id)!;
  expect(live.dedup.size).toBe(KEYS);

  const chunks = [...engine.takeSnapshot().chunks];
  const connectionChunk = chunks.find((chunk): chunk is Extract<SnapshotChunk, { k: 'connection' }> => chunk.k === 'connection')!;
  expect(connectionChunk.dedupKeys).toEqual([]);
  const slices = chunks.filter((chunk): chunk is Extract<SnapshotChunk, { k: 'dedupKeys' }> => chunk.k === 'dedupKeys');
  expect(slices.map((slice) => slice.keys.length)).toEqual([DEDUP_KEYS_PER_CHUNK, DEDUP_KEYS_PER_CHUNK, 123]);
  expect(slices.every((slice) => slice.connectionId === connection.id)).toBe(true);
  expect(slices.flatMap((slice) => slice.keys)).toEqual(live.dedup.toSnapshot());

  const restoredEngine = new Engine({ clock, log: inMemoryLog, limits: LIMITS });
  const restorer = restoredEngine.restorer();
  for (const chunk of chunks) restorer.restore(chunk);
  const restored = restoredEngine.connection(connection.id)!;
  expect(restored.dedup.toSnapshot()).toEqual(live.dedup.toSnapshot());
  for (const cache of [live.dedup, restored.dedup]) for (let i = 0; i < 20; i++) cache.add(`later-${i}`);
  expect(restored.dedup.toSnapshot()).toEqual(live.dedup.toSnapshot());
});

test('given dedup keys for a connection the snapshot does not have, the restore refuses it by name', () => {
  const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
  const restorer = engine.restorer();
  restorer.restore({ k: 'header', version: SNAPSHOT_FORMAT_VERSION, takenAtMs: T0 });
  expect(() => restorer.restore({ k: 'dedupKeys', connectionId: 'nobody', keys: ['k'] })).toThrow('snapshot has dedup keys for unknown connection nobody');
});
