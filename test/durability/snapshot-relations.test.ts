/**
 * Job relations across restarts: the relation columns travel in snapshot format 10, the
 * child index is rebuilt from them, and a child that arrived before a restart links to a
 * parent that arrives after it. A format 7 snapshot (before relations) still loads.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { childRowsOf, relationsOf } from '../../actors/connection/job-links.ts';
import { SNAPSHOT_FORMAT_VERSION, type SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { jobEvent } from '../support/events.ts';
import { openAt, workload } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function started(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  const clock = new ManualClock(T0);
  const live = await openAt(dir, clock);
  const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
  const { connection, apiKey } = await live.connections.create(await withOwnTeam(live.engine, admin), 'prod', undefined);
  return { dir, clock, live, connection, apiKey };
}

test('given children in a snapshot and their parent after the restart, then the links and the child index are whole', async () => {
  const { dir, clock, live, connection, apiKey } = await started('jw-relations-');
  await ingestEvents(live.engine, apiKey, [
    jobEvent(connection.id, T0, { externalId: 'child-1', parentExternalId: 'parent', rootExternalId: 'parent' }),
    jobEvent(connection.id, T0 + 1, { externalId: 'child-2', parentExternalId: 'parent' }),
    jobEvent(connection.id, T0 + 2, { externalId: 'grandchild', parentExternalId: 'child-2' }),
  ]);
  await live.store.writeSnapshot(live.engine.takeSnapshot());
  await live.store.close();

  const restarted = await openAt(dir, clock);
  expect(restarted.report.snapshotSeq).toBeGreaterThan(0);
  await ingestEvents(restarted.engine, apiKey, [jobEvent(connection.id, T0 + 3, { externalId: 'parent', state: 'active' })]);
  const store = restarted.engine.connection(connection.id)!.jobs;
  const parent = store.rowOfExternalId('parent');
  expect([...childRowsOf(store, parent)].map((row) => store.table.externalId(row)).sort()).toEqual(['child-1', 'child-2']);
  expect(relationsOf(store, store.rowOfExternalId('grandchild'))).toEqual({ parentId: store.table.id(store.rowOfExternalId('child-2')), rootId: store.table.id(parent) });
  const expected = dumpEngine(restarted.engine, clock.nowMs());
  await restarted.store.close();
  // and again from the log alone on top of the snapshot: the same
  const again = await openAt(dir, clock);
  expect(again.report.recordsReplayed).toBeGreaterThan(0);
  expect(dumpEngine(again.engine, clock.nowMs())).toEqual(expected);
  await again.store.close();
});

test('given a snapshot in format 7 (no relation columns), then it loads, and the next snapshot is format 10', async () => {
  const { dir, clock, live, connection, apiKey } = await started('jw-format7-');
  await workload(live, apiKey, connection.id, 1, { relations: false });
  const formatSeven = (chunk: SnapshotChunk): SnapshotChunk => {
    if (chunk.k === 'header') return { ...chunk, version: 7 };
    if (chunk.k !== 'jobColumns') return chunk;
    const { parentExternalId: _parents, rootExternalId: _roots, ...columns } = chunk.columns;
    return { ...chunk, columns };
  };
  await live.store.writeSnapshot({ chunks: [...live.engine.takeSnapshot().chunks].map(formatSeven).values() });
  const expected = dumpEngine(live.engine, clock.nowMs());
  await live.store.close();

  const upgraded = await openAt(dir, clock);
  expect(upgraded.report.recordsReplayed).toBe(0);
  expect(dumpEngine(upgraded.engine, clock.nowMs())).toEqual(expected);
  const [header] = upgraded.engine.takeSnapshot().chunks;
  expect(header).toMatchObject({ k: 'header', version: SNAPSHOT_FORMAT_VERSION });
  expect(SNAPSHOT_FORMAT_VERSION).toBe(10);
  await upgraded.store.close();
});
