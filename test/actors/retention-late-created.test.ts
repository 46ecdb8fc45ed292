/**
 * Retention removes a job whose current state began before the cutoff, also when its
 * payload `createdAt` is later than that (a producer clock ahead of the workers'), which
 * the createdAt scan alone cannot find; and it does so the same way after a restart,
 * whether the jobs come back from the log or from a snapshot.
 */
import type { JobCommand } from '../../actors/connection/command-types.ts';
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { LateCreatedJobs } from '../../actors/connection/late-created-jobs.ts';
import { Engine, type EngineRecord } from '../../actors/engine.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { iso, jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

const RETENTION_MS = 86_400_000;
const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 1_000, maxJobsPerConnection: 1_000, retentionMs: RETENTION_MS };
/** retention at T0 + RETENTION_MS: the cutoff is T0 */
const CUTOFF_MS = T0;

function actorWith(events: unknown[], limits = LIMITS): ConnectionActor {
  const actor = new ConnectionActor('c1', limits);
  ingest(actor, events);
  return actor;
}

function ingest(actor: ConnectionActor, events: unknown[]): void {
  const { record, reply } = actor.decideIngest(events, CUTOFF_MS + RETENTION_MS);
  expect(reply.errors).toBeUndefined();
  if (record !== null) actor.evolve(record);
}

function externalIds(actor: ConnectionActor): string[] {
  return [...actor.jobs.values()].map((job) => job.externalId).sort();
}

/** A job whose only event is at `atMs` but whose payload says it was created at `createdAtMs`. */
function lateCreated(externalId: string, atMs: number, createdAtMs: number, state = 'queued') {
  return jobEvent('c1', atMs, { externalId, state, createdAt: iso(createdAtMs) });
}

describe('retention of jobs whose reported createdAt is later than their state change', () => {
  test('removed when the state began before the cutoff, kept when it began at the cutoff; createdAt stays as reported', () => {
    const actor = actorWith([
      lateCreated('late-old', CUTOFF_MS - 1, CUTOFF_MS + 5_000),
      lateCreated('late-at-cutoff', CUTOFF_MS, CUTOFF_MS + 5_000),
      jobEvent('c1', CUTOFF_MS - 1, { externalId: 'plain-old' }),
      jobEvent('c1', CUTOFF_MS, { externalId: 'plain-at-cutoff' }),
    ]);
    expect(actor.jobs.getByExternalId('late-old')!.createdAtMs).toBe(CUTOFF_MS + 5_000);

    actor.expire(CUTOFF_MS + RETENTION_MS);

    expect(externalIds(actor)).toEqual(['late-at-cutoff', 'plain-at-cutoff']);
  });

  test('a late-created job whose state then changes again is judged by the new change', () => {
    const actor = actorWith([lateCreated('moved-on', CUTOFF_MS - 10, CUTOFF_MS + 5_000), lateCreated('stale', CUTOFF_MS - 10, CUTOFF_MS + 5_000)]);
    ingest(actor, [jobEvent('c1', CUTOFF_MS + 1, { externalId: 'moved-on', state: 'active' })]);

    actor.expire(CUTOFF_MS + RETENTION_MS);

    expect(externalIds(actor)).toEqual(['moved-on']);
  });

  test('an older event that moves the start of the state back makes a kept job expire', () => {
    // active at the cutoff, then an earlier `active` arrives: the state began 10 ms before the cutoff
    const actor = actorWith([jobEvent('c1', CUTOFF_MS - 100, { externalId: 'backdated', state: 'queued', createdAt: iso(CUTOFF_MS + 5_000) })]);
    ingest(actor, [jobEvent('c1', CUTOFF_MS, { externalId: 'backdated', state: 'active' })]);
    ingest(actor, [jobEvent('c1', CUTOFF_MS - 10, { externalId: 'backdated', state: 'active', attempt: 2 })]);

    actor.expire(CUTOFF_MS + RETENTION_MS);

    expect(externalIds(actor)).toEqual([]);
  });

  test('a late-created job the job cap evicted is not removed a second time by retention', () => {
    const actor = actorWith([lateCreated('evicted', CUTOFF_MS - 10, CUTOFF_MS + 5_000)], { ...LIMITS, maxJobsPerConnection: 1 });
    ingest(actor, [jobEvent('c1', CUTOFF_MS + 10_000, { externalId: 'newer' })]); // created after 'evicted'
    expect(externalIds(actor)).toEqual(['newer']);

    actor.expire(CUTOFF_MS + RETENTION_MS);

    expect(externalIds(actor)).toEqual(['newer']);
  });

  test('retention twice in a row: the second finds nothing left to remove', () => {
    const actor = actorWith([lateCreated('late', CUTOFF_MS - 10, CUTOFF_MS + 5_000), lateCreated('kept', CUTOFF_MS + 10, CUTOFF_MS + 5_000)]);
    actor.expire(CUTOFF_MS + RETENTION_MS);
    actor.expire(CUTOFF_MS + RETENTION_MS + 1);
    expect(externalIds(actor)).toEqual(['kept']);
  });
});

describe('retention of jobs created before the cutoff', () => {
  test('a job is judged by when its current state began: exactly at the cutoff it stays, a millisecond earlier it goes', () => {
    const actor = actorWith([
      jobEvent('c1', CUTOFF_MS - 5_000, { externalId: 'changed-at-cutoff', state: 'queued' }),
      jobEvent('c1', CUTOFF_MS, { externalId: 'changed-at-cutoff', state: 'active' }),
      jobEvent('c1', CUTOFF_MS - 5_000, { externalId: 'changed-before', state: 'queued' }),
      jobEvent('c1', CUTOFF_MS - 1, { externalId: 'changed-before', state: 'active' }),
      jobEvent('c1', CUTOFF_MS - 5_000, { externalId: 'changed-after', state: 'queued' }),
      jobEvent('c1', CUTOFF_MS + 1, { externalId: 'changed-after', state: 'active' }),
    ]);
    actor.expire(CUTOFF_MS + RETENTION_MS);
    expect(externalIds(actor)).toEqual(['changed-after', 'changed-at-cutoff']);
  });
});

describe('the late-created index', () => {
  test('holds only jobs whose state began before their reported createdAt, and lets go when that changes', () => {
    const actor = actorWith([
      lateCreated('late', CUTOFF_MS - 10, CUTOFF_MS + 5_000),
      jobEvent('c1', CUTOFF_MS, { externalId: 'reported-on-time', createdAt: iso(CUTOFF_MS) }),
      jobEvent('c1', CUTOFF_MS, { externalId: 'reported-earlier', createdAt: iso(CUTOFF_MS - 1) }),
      jobEvent('c1', CUTOFF_MS, { externalId: 'unreported' }),
    ]);
    const index = new LateCreatedJobs(actor.jobs.table);
    for (const job of actor.jobs.values()) index.update(actor.jobs.rowOf(job.id));
    expect(index.size).toBe(1);
    expect([...index.retainedBefore(CUTOFF_MS)].map((row) => actor.jobs.table.externalId(row))).toEqual(['late']);
    expect([...index.retainedBefore(CUTOFF_MS - 10)]).toEqual([]);

    const late = actor.jobs.rowOfExternalId('late');
    ingest(actor, [jobEvent('c1', CUTOFF_MS + 6_000, { externalId: 'late', state: 'active' })]);
    index.update(late);
    expect(index.size).toBe(0);
    expect([...index.retainedBefore(CUTOFF_MS + RETENTION_MS)]).toEqual([]);
  });

  test('a held job whose state began earlier still is found by its new time; delete lets it go', () => {
    const actor = actorWith([jobEvent('c1', CUTOFF_MS + 100, { externalId: 'late', state: 'active', createdAt: iso(CUTOFF_MS + 5_000) })]);
    const late = actor.jobs.rowOfExternalId('late');
    const index = new LateCreatedJobs(actor.jobs.table);
    index.update(late);
    expect([...index.retainedBefore(CUTOFF_MS)]).toEqual([]);
    ingest(actor, [jobEvent('c1', CUTOFF_MS - 100, { externalId: 'late', state: 'active', attempt: 2 })]);
    index.update(late);
    expect(index.size).toBe(1);
    expect([...index.retainedBefore(CUTOFF_MS)]).toEqual([late]);
    index.delete(late);
    index.delete(late);
    expect(index.size).toBe(0);
    expect([...index.retainedBefore(CUTOFF_MS + RETENTION_MS)]).toEqual([]);
  });
});

describe('retention of what else a connection holds', () => {
  test('workers last heard from and queues last seen before the cutoff are removed; at the cutoff they stay', () => {
    const actor = actorWith([
      workerEvent('c1', CUTOFF_MS - 1, { externalId: 'silent' }),
      workerEvent('c1', CUTOFF_MS, { externalId: 'heard' }),
      queueEvent('c1', CUTOFF_MS - 1, { name: 'stale' }),
      queueEvent('c1', CUTOFF_MS, { name: 'seen' }),
    ]);
    actor.expire(CUTOFF_MS + RETENTION_MS);
    expect([...actor.workers.values()].map((worker) => worker.externalId)).toEqual(['heard']);
    expect([...actor.queues.values()].map((queue) => queue.name)).toEqual(['seen']);
  });

  test('commands and their outcomes created before the cutoff are removed, in order; at the cutoff they stay', () => {
    const actor = actorWith([
      jobEvent('c1', CUTOFF_MS + 10, { externalId: 'a', state: 'active' }),
      jobEvent('c1', CUTOFF_MS + 10, { externalId: 'b', state: 'active' }),
      jobEvent('c1', CUTOFF_MS + 10, { externalId: 'c', state: 'active' }),
    ]);
    const revokeAt = (externalId: string, atMs: number) => {
      const { record } = actor.decideJobAction('revoke', [actor.jobs.getByExternalId(externalId)!.id], atMs);
      actor.evolve(record!);
    };
    revokeAt('a', CUTOFF_MS - 2);
    revokeAt('b', CUTOFF_MS - 1);
    revokeAt('c', CUTOFF_MS);

    actor.expire(CUTOFF_MS + RETENTION_MS);

    expect(actor.commands.oldestFirst(10).map((command) => (command as JobCommand).externalId)).toEqual(['c']);
    const outcomes = actor.commandOutcomes.toSnapshot();
    expect(outcomes.map((outcome) => outcome.jobId)).toEqual([actor.jobs.getByExternalId('c')!.id]);
  });
});

describe('after a restart', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function openAt(dir: string, clock: ManualClock) {
    const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', log: () => undefined });
    const engine = new Engine({ clock, log: store, limits: LIMITS });
    const restorer = engine.restorer();
    await store.recover({ snapshotChunk: (chunk) => restorer.restore(chunk), record: (record) => engine.evolve(record as EngineRecord) });
    return { store, engine };
  }

  /** A service with one connection holding a late-created job and a plain one, both older than the cutoff. */
  async function serviceWithOldJobs(dir: string, clock: ManualClock) {
    const opened = await openAt(dir, clock);
    const owner = { id: 'u1', email: 'owner@example.com', passwordHash: 'not used here', isAdmin: true, createdAtMs: T0 };
    await opened.engine.commit({ t: 'user.created', user: owner });
    const { connection, apiKey } = await new ConnectionService(opened.engine).create(await withOwnTeam(opened.engine, owner), 'prod', undefined);
    const reply = await ingestEvents(opened.engine, apiKey, [
      jobEvent(connection.id, CUTOFF_MS - 10, { externalId: 'late', createdAt: iso(CUTOFF_MS + 5_000) }),
      jobEvent(connection.id, CUTOFF_MS - 10, { externalId: 'plain' }),
      jobEvent(connection.id, CUTOFF_MS + 10, { externalId: 'recent', createdAt: iso(CUTOFF_MS + 5_000) }),
    ]);
    expect(reply.accepted).toBe(3);
    return { ...opened, connectionId: connection.id };
  }

  for (const restoredFrom of ['log', 'snapshot'] as const) {
    test(`retention after recovery from the ${restoredFrom} removes the late-created job, and replaying that retention again agrees`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'jobwatch-retention-'));
      dirs.push(dir);
      const clock = new ManualClock(CUTOFF_MS + RETENTION_MS);
      const live = await serviceWithOldJobs(dir, clock);
      if (restoredFrom === 'snapshot') await live.store.writeSnapshot(live.engine.takeSnapshot());
      await live.store.close();

      const restarted = await openAt(dir, clock);
      await restarted.engine.commit({ t: 'retention', atMs: CUTOFF_MS + RETENTION_MS });
      const remaining = () => externalIds(restarted.engine.connection(live.connectionId)!);
      expect(remaining()).toEqual(['recent']);
      await restarted.store.close();

      const replayed = await openAt(dir, clock);
      expect(externalIds(replayed.engine.connection(live.connectionId)!)).toEqual(['recent']);
      await replayed.store.close();
    });
  }
});
