/**
 * Upgrade by restart: a data directory whose snapshot was written in format 1 (jobs as
 * objects, before job columns) recovers to the same state the old version held.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { entryAtMs, entryCode } from '../../actors/connection/job-history.ts';
import type { Engine } from '../../actors/engine.ts';
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { openAt, workload } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Format 1 kept a history as `[atMs, stateCode, ...]` pairs. */
const historyAsPairs = (history: readonly number[]): number[] => history.flatMap((entry) => [entryAtMs(entry), entryCode(entry)]);

/** The chunks format 1 wrote: the same header and connection chunks, then jobs as plain objects, 1,000 a chunk. */
function* format1Chunks(engine: Engine): Generator<unknown> {
  for (const chunk of engine.takeSnapshot().chunks) {
    if (chunk.k === 'header') yield { ...chunk, version: 1 };
    else if (chunk.k === 'jobColumns') continue;
    else if (chunk.k === 'end') {
      for (const connectionId of engine.connectionIds()) {
        const jobs = [...engine.connection(connectionId)!.jobs.values()].map((job) => ({ ...job, history: historyAsPairs(job.history) }));
        for (let start = 0; start < jobs.length; start += 1000) yield { k: 'jobs', connectionId, jobs: jobs.slice(start, start + 1000) };
      }
      yield chunk;
    } else yield chunk satisfies SnapshotChunk;
  }
}

test('given a snapshot in format 1, then recovery restores the state it was taken from, and the next snapshot is format 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jw-format1-'));
  dirs.push(dir);
  const clock = new ManualClock(T0);
  const live = await openAt(dir, clock);
  const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
  const { connection, apiKey } = await live.connections.create(admin, 'prod');
  const other = await live.connections.create(admin, 'other');
  await workload(live, apiKey, connection.id, 1);
  await workload(live, other.apiKey, other.connection.id, 2);
  await live.store.writeSnapshot({ chunks: format1Chunks(live.engine) });
  const expected = dumpEngine(live.engine, clock.nowMs());
  await live.store.close();

  const upgraded = await openAt(dir, clock);
  expect(upgraded.report.snapshotSeq).toBeGreaterThan(0);
  expect(upgraded.report.recordsReplayed).toBe(0);
  expect(dumpEngine(upgraded.engine, clock.nowMs())).toEqual(expected);
  const kinds = [...upgraded.engine.takeSnapshot().chunks].map((chunk) => (chunk.k === 'header' ? `header ${chunk.version}` : chunk.k));
  expect(kinds).toContain('header 2');
  expect(kinds).toContain('jobColumns');
  expect(kinds).not.toContain('jobs');
  await upgraded.store.close();
});
