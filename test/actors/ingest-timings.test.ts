/**
 * The ingest timings behind the load test's tail figures: percentiles over the kept
 * samples, every ingest that commits records its work and durability wait, and the log
 * reports each group commit with the number of records it made durable.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { Engine } from '../../actors/engine.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { IngestTimings, LatencySamples } from '../../actors/services/ingest-timings.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('LatencySamples', () => {
  test('p50, p99 and max over the samples', () => {
    const samples = new LatencySamples();
    for (let ms = 1; ms <= 100; ms++) samples.add(ms);
    expect(samples.size).toBe(100);
    expect(samples.describe()).toBe('p50 50.0 / p99 99.0 / max 100.0 ms');
  });

  test('percentiles over the newest samples once full; max over all', () => {
    const samples = new LatencySamples(4);
    for (const ms of [500, 1, 2, 3, 4]) samples.add(ms);
    expect(samples.describe()).toBe('p50 2.0 / p99 4.0 / max 500.0 ms');
    expect(new LatencySamples().describe()).toBe('none');
  });
});

describe('IngestTimings', () => {
  test('an ingest records its work and wait; the log reports each group commit and its records', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobwatch-timings-'));
    tempDirs.push(dir);
    const timings = new IngestTimings();
    const store = await openDurableStore({
      dir,
      storage: new FileStorage(),
      fsync: 'always',
      log: () => {},
      observer: timings,
    });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    const engine = new Engine({ clock: new ManualClock(T0), log: store, limits: { dailyEventLimit: 0, dedupKeysMax: 100, maxJobsPerConnection: 100, retentionMs: 86_400_000 } });
    const user = engine.accounts.decideCreateUser('owner@example.com', 'hash', true, T0);
    await engine.commit(user);
    if (user.t !== 'user.created') throw new Error('expected a user record');
    const connection = engine.accounts.decideCreateConnection(user.user.id, 'c', 'sk_timings_key', T0);
    await engine.commit(connection);
    if (connection.t !== 'connection.created') throw new Error('expected a connection record');
    const id = connection.connection.id;

    // two ingests in one turn share a group commit
    const beforeMs = performance.now();
    await Promise.all([
      ingestEvents(engine, 'sk_timings_key', [jobEvent(id, T0, { externalId: 'a' })], timings),
      ingestEvents(engine, 'sk_timings_key', [jobEvent(id, T0, { externalId: 'b' })], timings),
    ]);
    const wallMs = performance.now() - beforeMs;
    await store.close();

    expect(timings.work.size).toBe(2);
    // each part of a request is within the time the two requests took
    const maxOf = (samples: LatencySamples) => Number(samples.describe().match(/max ([\d.]+) ms/)![1]);
    expect(maxOf(timings.work)).toBeLessThanOrEqual(wallMs + 0.1);
    expect(maxOf(timings.durableWait)).toBeLessThanOrEqual(wallMs + 0.1);
    expect(timings.durableWait.size).toBe(2);
    const summary = timings.summary();
    expect(summary).toStartWith('ingest timings: 2 requests; work p50 ');
    // user, connection, then the two ingests together: 3 group commits of 4 records
    expect(summary).toContain('group commits 3 (1.3 records each)');
    expect(summary).toContain('event-loop stalls over 50 ms: 0 (none)');
  });
});
