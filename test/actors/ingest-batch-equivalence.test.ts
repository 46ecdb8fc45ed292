/**
 * An ingest record applies its events one by one but re-indexes each job once, at the end
 * of the record (JobStore.deferIndexing). Property: applying a record whole leaves exactly
 * the state that applying each of its events as a record of its own leaves (the old,
 * per-event path): every job field, every index order, tallies, groups, metrics, workers,
 * queues, dedup keys, quota and byte estimates. Batches are valid events for a small set
 * of jobs, so a batch often holds several events of one job, in and out of order.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ManualClock } from '../../actors/clock.ts';
import type { IngestRecord } from '../../actors/connection/connection-records.ts';
import { Engine, inMemoryLog, type EngineRecord } from '../../actors/engine.ts';
import { JOB_STATES } from '../../actors/ingest/states.ts';
import { validEvent } from '../fuzz/generators.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 500, maxJobsPerConnection: 1_000_000, retentionMs: 7 * 86_400_000 };
const RUNS = process.env.FUZZ_RUNS !== undefined && /^\d+$/.test(process.env.FUZZ_RUNS) ? Number(process.env.FUZZ_RUNS) : 60;

/** Two engines holding the same user and connection, and that connection's id. */
function twoEngines(): { whole: Engine; perEvent: Engine; connectionId: string } {
  const make = () => new Engine({ clock: new ManualClock(T0), log: inMemoryLog, limits: LIMITS });
  const whole = make();
  const perEvent = make();
  const user = whole.accounts.decideCreateUser('owner@example.com', 'hash', true, T0);
  whole.evolve(user);
  perEvent.evolve(user);
  if (user.t !== 'user.created') throw new Error('expected a user record');
  const connection = whole.accounts.decideCreateConnection(user.user.id, 'c', 'sk_test_key', T0);
  whole.evolve(connection);
  perEvent.evolve(connection);
  if (connection.t !== 'connection.created') throw new Error('expected a connection record');
  return { whole, perEvent, connectionId: connection.connection.id };
}

/** The tallies engine-dump does not name: every queue, worker and state the generators use. */
function tallies(engine: Engine, connectionId: string) {
  const jobs = engine.connection(connectionId)!.jobs;
  return {
    queued: ['default', 'emails'].map((queue) => jobs.queuedPerQueue.get(queue)),
    active: ['w1', 'w2'].map((worker) => jobs.activePerWorker.get(worker)),
    perState: JOB_STATES.map((state) => jobs.countWhere((job) => job.state === state)),
    perQueueAndWorker: jobs.countWhere((job) => job.queue === 'emails' && job.workerId === 'w2'),
  };
}

describe('an ingest record applied whole equals its events applied one at a time', () => {
  test('every job, index, tally, metric, worker, queue, dedup key and quota', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(validEvent('@', T0), { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        (batches) => {
          const { whole, perEvent, connectionId } = twoEngines();
          const actor = whole.connection(connectionId)!;
          let nowMs = T0;
          let applied = 0;
          for (const batch of batches) {
            nowMs += 60_000;
            const events = batch.map((event) => ({ ...event, connectionId }));
            const { record } = actor.decideIngest(events, nowMs);
            if (record === null) continue;
            // the per-event engine gets its own copy: evolve interns strings into the events it applies
            const copy = structuredClone(record) as IngestRecord;
            whole.evolve(record);
            for (const event of copy.events) perEvent.evolve({ ...copy, events: [event] } as EngineRecord);
            applied += record.events.length;
          }
          expect(dumpEngine(whole, nowMs)).toEqual(dumpEngine(perEvent, nowMs));
          expect(tallies(whole, connectionId)).toEqual(tallies(perEvent, connectionId));
          for (const engine of [whole, perEvent]) engine.connection(connectionId)!.jobs.table.checkInvariants();
          return applied >= 0;
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('a batch with several events of one job re-indexes it to its final values', () => {
    const { whole, connectionId } = twoEngines();
    const actor = whole.connection(connectionId)!;
    const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();
    const event = (state: string, offsetMs: number, job: Record<string, unknown> = {}) => ({
      type: 'job_state_change',
      timestamp: at(offsetMs),
      framework: 'celery',
      connectionId,
      job: { externalId: 'a', name: 'tasks.add', queue: 'default', state, ...job },
    });
    const { record } = actor.decideIngest(
      [event('queued', 0), event('active', 1_000, { workerId: 'w1', startedAt: at(1_000) }), event('completed', 3_000, { workerId: 'w1', completedAt: at(3_000) })],
      T0 + 10_000,
    );
    whole.evolve(record!);
    const job = actor.jobs.getByExternalId('a')!;
    const idsIn = (key: 'state' | 'durationMs' | 'worker') => [...actor.jobs.indexes[key].scan('asc')].map((entry) => [entry.key, actor.jobs.table.id(entry.item)]);
    expect(idsIn('state')).toEqual([['completed', job.id]]);
    expect(idsIn('durationMs')).toEqual([[2_000, job.id]]);
    expect(idsIn('worker')).toEqual([['w1', job.id]]);
    expect(actor.jobs.queuedPerQueue.get('default')).toBe(0);
    expect(actor.jobs.activePerWorker.get('w1')).toBe(0);
    expect(actor.jobs.countWhere((j) => j.state === 'completed')).toBe(1);
    expect(actor.jobs.countWhere((j) => j.state === 'queued' || j.state === 'active')).toBe(0);
  });
});
