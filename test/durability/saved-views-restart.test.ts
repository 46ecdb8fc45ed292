/**
 * Saved views survive a restart: replayed from the log, restored from a snapshot (format
 * 9 keeps them in the accounts chunk), and a snapshot of format 7, from before them, starts
 * with none and takes new ones.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { SavedViewService } from '../../actors/services/saved-view-service.ts';
import { openAt } from '../support/snapshot-workload.ts';
import { withOwnTeam } from '../support/team-access.ts';
import { T0 } from '../support/test-app.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data directory with one team's two saved views; the opened engine and the views as the API lists them. */
async function withViews() {
  const dir = mkdtempSync(join(tmpdir(), 'jw-views-'));
  dirs.push(dir);
  const clock = new ManualClock(T0);
  const live = await openAt(dir, clock);
  const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
  const access = await withOwnTeam(live.engine, admin);
  const teamId = access.teams()[0]!.team.id;
  const views = new SavedViewService(live.engine);
  await views.create(access, { teamId, name: 'Failed emails', params: { state: 'failed', queue: 'emails' } });
  const slow = await views.create(access, { teamId, name: 'Slow', params: { sortBy: 'durationMs' } });
  await views.update(access, slow.id, { name: 'Slowest' });
  return { dir, clock, live, admin, listed: views.list(access) };
}

const listedAfter = async (opened: Awaited<ReturnType<typeof openAt>>, adminId: string) => new SavedViewService(opened.engine).list(await withOwnTeam(opened.engine, opened.engine.accounts.users.get(adminId)!));

test('replayed from the log after a restart', async () => {
  const { dir, clock, live, admin, listed } = await withViews();
  expect(listed.map((view) => view.name)).toEqual(['Failed emails', 'Slowest']);
  await live.store.close();
  const reopened = await openAt(dir, clock);
  expect(reopened.report.recordsReplayed).toBeGreaterThan(0);
  expect(await listedAfter(reopened, admin.id)).toEqual(listed);
  await reopened.store.close();
});

test('restored from a snapshot, with nothing left to replay', async () => {
  const { dir, clock, live, admin, listed } = await withViews();
  const chunks = [...live.engine.takeSnapshot().chunks];
  const accounts = chunks.find((chunk) => chunk.k === 'accounts');
  expect(accounts?.k === 'accounts' && accounts.data.views?.length).toBe(2);
  await live.store.writeSnapshot({ chunks: chunks.values() });
  await live.store.close();
  const reopened = await openAt(dir, clock);
  expect(reopened.report.recordsReplayed).toBe(0);
  expect(await listedAfter(reopened, admin.id)).toEqual(listed);
  await reopened.store.close();
});

test('a format 7 snapshot, from before saved views, starts with none and takes new ones', async () => {
  const { dir, clock, live, admin } = await withViews();
  const formatSeven = [...live.engine.takeSnapshot().chunks].map((chunk): SnapshotChunk => {
    if (chunk.k === 'header') return { ...chunk, version: 7 };
    if (chunk.k !== 'accounts') return chunk;
    const { views: _views, ...data } = chunk.data;
    return { ...chunk, data };
  });
  await live.store.writeSnapshot({ chunks: formatSeven.values() });
  await live.store.close();
  const reopened = await openAt(dir, clock);
  expect(await listedAfter(reopened, admin.id)).toEqual([]);
  const access = await withOwnTeam(reopened.engine, reopened.engine.accounts.users.get(admin.id)!);
  await new SavedViewService(reopened.engine).create(access, { teamId: access.teams()[0]!.team.id, name: 'After the upgrade', params: {} });
  expect((await listedAfter(reopened, admin.id)).map((view) => view.name)).toEqual(['After the upgrade']);
  await reopened.store.close();
});
