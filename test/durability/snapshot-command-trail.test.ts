/**
 * Format 5 keeps each job's last commands with where each one's state entry stands and the
 * state before it; formats up to 4 kept the latest command per job without them. Either way,
 * a command still pending when the snapshot was taken can be refused after the restart and
 * its job shows the job system's state again.
 */
import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { SNAPSHOT_FORMAT_VERSION, type SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { toJobDetail } from '../../actors/views/job-view.ts';
import { NO_RELATIONS } from '../../actors/connection/job-links.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 100, maxJobsPerConnection: 100, retentionMs: 86_400_000 };

/** A connection with three jobs: one revoked and refused, then revoked again (pending); one retried and carried out; one untouched. */
function engineWithCommands(): Engine {
  const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
  engine.evolve({ t: 'connection.created', connection: { id: 'c1', name: 'prod', ownerId: 'u1', keyHash: 'h', keyPrefix: 'sk_x', createdAtMs: T0 } });
  const actor = engine.connection('c1')!;
  const ingest = (events: unknown[], atMs: number) => actor.evolve(actor.decideIngest(events, atMs).record!);
  ingest([jobEvent('c1', T0 - 9_000, { externalId: 'a', state: 'active' }), jobEvent('c1', T0 - 9_000, { externalId: 'b', state: 'failed' }), jobEvent('c1', T0 - 9_000, { externalId: 'c', state: 'queued' })], T0);
  const idOf = (externalId: string) => actor.jobs.getByExternalId(externalId)!.id;
  const act = (action: 'revoke' | 'retry', externalId: string, atMs: number) => actor.evolve(actor.decideJobAction(action, [idOf(externalId)], atMs).record!);
  act('revoke', 'a', T0);
  actor.evolve({ t: 'commands.acked', connectionId: 'c1', ids: [], failed: [{ id: actor.commands.oldestFirst(1)[0]!.id, reason: 'running' }], atMs: T0 + 1_000 });
  act('revoke', 'a', T0 + 2_000);
  act('retry', 'b', T0 + 2_000);
  actor.evolve({ t: 'commands.acked', connectionId: 'c1', ids: [actor.commands.oldestFirst(2)[1]!.id], atMs: T0 + 3_000 });
  return engine;
}

function restoredFrom(chunks: Iterable<SnapshotChunk>): Engine {
  const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
  const restorer = engine.restorer();
  for (const chunk of chunks) restorer.restore(structuredClone(chunk));
  return engine;
}

const details = (engine: Engine) => {
  const actor = engine.connection('c1')!;
  return ['a', 'b', 'c'].map((externalId) => {
    const job = actor.jobs.getByExternalId(externalId)!;
    return toJobDetail(job, [], actor.commandOutcomes.trailOf(job.id), actor.supportOf, NO_RELATIONS);
  });
};

/** Refuses job a's pending revoke as its agent would after the restart. */
function refusePending(engine: Engine): void {
  const actor = engine.connection('c1')!;
  const [pending] = actor.commands.oldestFirst(10);
  engine.evolve({ t: 'commands.acked', connectionId: 'c1', ids: [], failed: [{ id: pending!.id, reason: 'still running' }], atMs: T0 + 4_000 });
}

describe('command trails in snapshots', () => {
  test(`format ${SNAPSHOT_FORMAT_VERSION} restores every job's commands, their notes and what is pending; a refusal after the restart withdraws as before it`, () => {
    const live = engineWithCommands();
    const chunks = [...live.takeSnapshot().chunks];
    expect(chunks[0]).toMatchObject({ k: 'header', version: SNAPSHOT_FORMAT_VERSION });
    const restored = restoredFrom(chunks);
    expect(details(restored)).toEqual(details(live));
    expect(restored.connection('c1')!.commandOutcomes.toSnapshot()).toEqual(live.connection('c1')!.commandOutcomes.toSnapshot());
    expect(details(live).map((job) => job.stateHistory.filter((entry) => entry.note !== undefined).map((entry) => `${entry.state} (${entry.note})`))).toEqual([
      ['active (revoke requested)', 'active (revoke refused: running)', 'cancelled (revoke requested)'],
      ['retrying (retry requested)'],
      [],
    ]);
    for (const engine of [live, restored]) refusePending(engine);
    expect(details(restored)).toEqual(details(live));
    expect(details(restored)[0]!.state).toBe('active');
  });

  test('format 4 (one command per job, no entry time or prior state) still restores, and its pending command can still be withdrawn', () => {
    const live = engineWithCommands();
    const formatFour = [...live.takeSnapshot().chunks].map((chunk): SnapshotChunk => {
      if (chunk.k === 'header') return { ...chunk, version: 4 };
      if (chunk.k !== 'connection') return chunk;
      const latest = new Map(chunk.commandOutcomes!.map(({ entryAtMs: _entry, priorState: _prior, ...outcome }) => [outcome.jobId, outcome]));
      return { ...chunk, commandOutcomes: [...latest.values()] };
    });
    const restored = restoredFrom(formatFour);
    const actor = restored.connection('c1')!;
    const jobA = actor.jobs.getByExternalId('a')!;
    expect(actor.commandOutcomes.trailOf(jobA.id)).toEqual([expect.objectContaining({ status: 'pending', entryAtMs: T0 + 2_000, priorState: null })]);
    expect(details(restored).map((job) => [job.state, job.lastCommand?.status ?? null])).toEqual([['cancelled', 'pending'], ['retrying', 'done'], ['queued', null]]);
    refusePending(restored);
    expect(restored.connection('c1')!.jobs.getByExternalId('a')!.state).toBe('active');
  });
});
