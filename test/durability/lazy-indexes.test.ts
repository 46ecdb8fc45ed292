/**
 * After a recovery from a snapshot the job indexes are built lazily (job-store.ts): each on
 * first read, all of them before any change. Whatever order reads and changes come in, the
 * state must equal that of indexes built eagerly.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { JOB_SORT_KEYS, JOB_SORT_VALUE } from '../../actors/connection/job-sort-keys.ts';
import { ascendingOrder } from '../../actors/jobs/ascending-order.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { openAt, workload } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';
import { accessOf, withOwnTeam } from '../support/team-access.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data directory whose snapshot is its last write: recovery replays nothing, so no index is built by replay. */
async function snapshottedDir(clock: ManualClock) {
  const dir = mkdtempSync(join(tmpdir(), 'jw-lazy-'));
  dirs.push(dir);
  const live = await openAt(dir, clock);
  const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
  const { connection, apiKey } = await live.connections.create(await withOwnTeam(live.engine, admin), 'prod', undefined);
  await workload(live, apiKey, connection.id, 1);
  await workload(live, apiKey, connection.id, 2);
  await live.store.writeSnapshot(live.engine.takeSnapshot());
  const expected = dumpEngine(live.engine, clock.nowMs());
  await live.store.close();
  return { dir, admin, apiKey, connectionId: connection.id, expected };
}

describe('indexes built lazily after a recovery', () => {
  test('reads before any change see what the live engine had, and the indexes wait until read', async () => {
    const clock = new ManualClock(T0);
    const { dir, connectionId, expected } = await snapshottedDir(clock);
    const recovered = await openAt(dir, clock);
    expect(recovered.report.recordsReplayed).toBe(0);
    const jobs = recovered.engine.connection(connectionId)!.jobs;
    expect(jobs.indexesPending).toBe(true);
    [...jobs.indexes.durationMs.scan('desc')];
    expect(jobs.indexesPending).toBe(true); // one read builds one index
    expect(dumpEngine(recovered.engine, clock.nowMs())).toEqual(expected);
    expect(jobs.indexesPending).toBe(false);
    await recovered.store.close();
  });

  test('changes before any read (an action, ingest) leave every index as a fresh build from the jobs would be', async () => {
    const clock = new ManualClock(T0);
    const { dir, apiKey, connectionId } = await snapshottedDir(clock);
    const opened = await openAt(dir, clock);
    const jobs = opened.engine.connection(connectionId)!.jobs;
    expect(jobs.indexesPending).toBe(true);
    const admin = opened.engine.accounts.userByEmail('admin@example.com')!;
    await opened.actions.bulk(accessOf(opened.engine, admin), 'revoke', [...jobs.values()].slice(0, 30).map((job) => job.id));
    await workload(opened, apiKey, connectionId, 3);
    const { table } = jobs;
    const byId = [...jobs.rows()];
    for (const key of JOB_SORT_KEYS) {
      const fresh = ascendingOrder(byId, (row) => JOB_SORT_VALUE[key](table, row)).items.map((row) => table.id(row));
      expect([...jobs.indexes[key].scan('asc')].map((entry) => table.id(entry.item))).toEqual(fresh);
    }
    const job = jobs.read(byId[0]!);
    const sameName = ascendingOrder(
      byId.filter((other) => table.nameOf(other) === job.name && table.id(other) !== job.id),
      (row) => table.createdAtMsOf(row),
    ).items.reverse();
    expect(jobs.recentOfName(job, 1_000).map((other) => other.id)).toEqual(sameName.map((other) => table.id(other)));
    await opened.store.close();
  });
});
