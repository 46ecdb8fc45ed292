/**
 * Format 7 keeps the commands on queues, workers and tasks (pending and settled), what each
 * agent said it supports, whether each queue is paused, and per job command whether it made
 * a state entry and what the agent reported beside its outcome. Through msgpack (as a
 * snapshot file holds it) a restore shows the same; a pending command can still be settled
 * after it. A format 7 snapshot (its job columns before the column list's texts) restores
 * them the same; a format 6 snapshot still restores: no controls, no capabilities, paused unknown.
 */
import { describe, expect, test } from 'bun:test';
import { pack, unpack } from 'msgpackr';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { SNAPSHOT_FORMAT_VERSION, type SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { toJobDetail } from '../../actors/views/job-view.ts';
import { NO_RELATIONS } from '../../actors/connection/job-links.ts';
import { toQueueStreamItem } from '../../actors/views/queue-view.ts';
import { jobEvent, queueEvent } from '../support/events.ts';
import { withFormatSevenJobs } from '../support/older-job-columns.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 100, maxJobsPerConnection: 100, retentionMs: 86_400_000 };

/** A connection whose queue `emails` was paused by a command, `reports` said nothing, with a pending clean, a pending retry now and a settled run now. */
function engineWithControls(): Engine {
  const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
  engine.evolve({ t: 'connection.created', connection: { id: 'c1', name: 'prod', ownerId: 'u1', keyHash: 'h', keyPrefix: 'sk_x', createdAtMs: T0 } });
  const actor = engine.connection('c1')!;
  const job = (externalId: string, state: string) => jobEvent('c1', T0 - 9_000, { externalId, state, queue: 'emails' }, { framework: 'bullmq' });
  actor.evolve(
    actor.decideIngest([job('a', 'retrying'), job('b', 'scheduled'), { ...queueEvent('c1', T0 - 9_000, { name: 'reports' }), framework: 'bullmq' }], T0 - 8_000).record!,
  );
  actor.evolve(actor.decideCapabilities({ framework: 'bullmq', agentVersion: '1.0.0', controls: { 'queue.pause': { supported: true }, 'worker.quiet': { supported: false, reason: 'no remote control' } } }, T0 - 7_000)!);
  const pause = actor.decideControl({ type: 'queue.pause', queue: 'emails' }, T0 - 6_000);
  actor.evolve(pause);
  actor.evolve(actor.decideControl({ type: 'queue.clean', queue: 'emails', params: { mode: 'finished', olderThanMs: 60_000, states: ['completed'] } }, T0 - 5_000));
  const idOf = (externalId: string) => actor.jobs.getByExternalId(externalId)!.id;
  actor.evolve(actor.decideJobAction('retry', [idOf('a')], T0 - 4_000).record!);
  const promote = actor.decideJobAction('promote', [idOf('b')], T0 - 4_000).record!;
  actor.evolve(promote);
  actor.evolve({
    t: 'commands.acked',
    connectionId: 'c1',
    ids: [],
    outcomes: [
      { id: pause.command.id, status: 'done', reason: null },
      { id: promote.targets[0]!.commandId, status: 'unsupported', reason: 'not here', details: { tried: 1 } },
    ],
    atMs: T0 - 3_000,
  });
  return engine;
}

function restoredFrom(chunks: Iterable<SnapshotChunk>): Engine {
  const engine = new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
  const restorer = engine.restorer();
  // as a snapshot file holds them: msgpack, which must keep -Infinity (a queue never said paused)
  for (const chunk of chunks) restorer.restore(unpack(pack(chunk)));
  return engine;
}

/** What the pages show of the connection: its queues and its jobs' details. */
function shown(engine: Engine) {
  const actor = engine.connection('c1')!;
  return {
    queues: ['emails', 'reports'].map((name) => toQueueStreamItem(actor.queues.get(name)!, actor, T0)),
    jobs: ['a', 'b'].map((externalId) => {
      const job = actor.jobs.getByExternalId(externalId)!;
      return toJobDetail(job, [], actor.commandOutcomes.trailOf(job.id), actor.supportOf, NO_RELATIONS);
    }),
  };
}

/** The agent answers the pending clean and retry after the restart. */
function settlePending(engine: Engine): void {
  const actor = engine.connection('c1')!;
  const ids = actor.commands.oldestFirst(10).map((command) => command.id);
  engine.evolve({ t: 'commands.acked', connectionId: 'c1', ids: [], outcomes: ids.map((id) => ({ id, status: 'failed' as const, reason: 'not found' })), atMs: T0 });
}

describe('controls in snapshots', () => {
  test(`format ${SNAPSHOT_FORMAT_VERSION} restores commands, outcomes, capabilities and paused queues; what is pending settles after as before`, () => {
    const live = engineWithControls();
    const chunks = [...live.takeSnapshot().chunks];
    expect(chunks[0]).toMatchObject({ k: 'header', version: SNAPSHOT_FORMAT_VERSION });
    const restored = restoredFrom(chunks);
    expect(shown(restored)).toEqual(shown(live));
    const { queues, jobs } = shown(live);
    expect(queues.map((queue) => queue.paused)).toEqual([true, null]);
    expect(queues[0]!.commands.map((command) => `${command.type} ${command.status}`)).toEqual(['queue.clean pending', 'queue.pause done']);
    expect(queues[0]!.controls['queue.pause']).toEqual({ available: false, reason: 'the queue is paused' });
    expect(jobs[1]!.lastCommand).toMatchObject({ type: 'promote', status: 'unsupported', details: { tried: 1 } });
    const restoredActor = restored.connection('c1')!;
    expect(restoredActor.capabilities.toSnapshot()).toEqual(live.connection('c1')!.capabilities.toSnapshot());
    expect(restoredActor.commands.controlSize).toBe(1);
    for (const engine of [live, restored]) settlePending(engine);
    expect(shown(restored)).toEqual(shown(live));
    // the retry now was refused: the job system's retrying stands, nothing withdrawn
    expect(shown(restored).jobs[0]!).toMatchObject({ state: 'retrying', lastCommand: { status: 'failed' } });
  });

  test('format 7 (the controls, job columns from before the column list) restores them the same', () => {
    const live = engineWithControls();
    // format 7 had no task metrics and no markers (format 8's), and job columns as format 4's
    const chunks = [...live.takeSnapshot().chunks]
      .filter((chunk) => chunk.k !== 'taskMetrics')
      .map((chunk) => {
        if (chunk.k !== 'connection') return withFormatSevenJobs(chunk, 7);
        const { markers: _markers, ...withoutMarkers } = chunk;
        return withFormatSevenJobs(withoutMarkers, 7);
      });
    expect(chunks.some((chunk) => chunk.k === 'jobColumns' && chunk.columns.texts === undefined)).toBe(true);
    const restored = restoredFrom(chunks);
    expect(shown(restored)).toEqual(shown(live));
    for (const engine of [live, restored]) settlePending(engine);
    expect(shown(restored)).toEqual(shown(live));
  });

  test('format 6 (commands on jobs only, no capabilities, nothing said of paused queues) still restores', () => {
    const live = engineWithControls();
    const formatFive = [...live.takeSnapshot().chunks].map((chunk): SnapshotChunk => {
      if (chunk.k === 'header') return { ...chunk, version: 6 };
      if (chunk.k !== 'connection') return chunk;
      const { controlOutcomes: _controls, capabilities: _capabilities, ...rest } = chunk;
      return {
        ...rest,
        commands: chunk.commands.filter((command) => command.type === 'revoke' || command.type === 'retry'),
        commandOutcomes: chunk.commandOutcomes!.filter((outcome) => outcome.type === 'retry').map(({ stateEntry: _entry, details: _details, ...outcome }) => outcome),
        queues: chunk.queues.map(({ paused: _paused, pausedAtMs: _at, ...queue }) => queue),
      };
    });
    const restored = restoredFrom(formatFive);
    const actor = restored.connection('c1')!;
    expect(shown(restored).queues.map((queue) => [queue.paused, queue.commands])).toEqual([
      [null, []],
      [null, []],
    ]);
    expect(actor.capabilities.toSnapshot()).toEqual([]);
    // a format 6 retry made its rule's state entry: refused, it is withdrawn as then
    settlePending(restored);
    expect(shown(restored).jobs[0]!.lastCommand).toMatchObject({ type: 'retry', status: 'failed' });
    // the queue says it is paused again with its next snapshot
    restored.evolve(actor.decideIngest([{ ...queueEvent('c1', T0, { name: 'emails', extensions: { paused: true } }), framework: 'bullmq' }], T0).record!);
    expect(actor.queues.get('emails')!.paused).toBe(true);
  });
});
