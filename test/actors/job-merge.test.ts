import { describe, expect, test } from 'bun:test';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { collapsedHistory, durationMsOf } from '../../actors/connection/job-record.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const CONNECTION = '0190a000-0000-7000-8000-000000000001';
const limits = { dailyEventLimit: 0, dedupKeysMax: 1000, maxJobsPerConnection: 1000, retentionMs: 86_400_000 };

/** given a fresh actor, when these batches are decided and evolved in order */
function ingestAll(actor: ConnectionActor, ...batches: unknown[][]) {
  for (const batch of batches) {
    const { record } = actor.decideIngest(batch, T0);
    if (record !== null) actor.evolve(record);
  }
  return actor;
}

const at = (seconds: number, job: Record<string, unknown>) => jobEvent(CONNECTION, T0 + seconds * 1000, job);

describe('job merge rules', () => {
  test('the newest timestamp decides the state; a late older event does not move the job back', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(3, { state: 'completed' })], [at(1, { state: 'queued' })], [at(2, { state: 'active' })]);
    const job = actor.jobs.getByExternalId('task-1')!;
    expect(job.state).toBe('completed');
    expect(collapsedHistory(job).map((entry) => entry.state)).toEqual(['queued', 'active', 'completed']);
  });

  test('history does not depend on arrival order', () => {
    const events = [at(1, { state: 'queued' }), at(2, { state: 'active' }), at(3, { state: 'retrying' }), at(4, { state: 'active' }), at(5, { state: 'completed' })];
    const inOrder = ingestAll(new ConnectionActor(CONNECTION, limits), events);
    const shuffled = ingestAll(new ConnectionActor(CONNECTION, limits), ...[4, 0, 3, 1, 2].map((i) => [events[i]]));
    const view = (actor: ConnectionActor) => {
      const job = actor.jobs.getByExternalId('task-1')!;
      return { state: job.state, history: collapsedHistory(job) };
    };
    expect(view(shuffled)).toEqual(view(inOrder));
  });

  test('runs of the same state collapse into their earliest entry; a late event can split a run', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(1, { state: 'active' }), at(3, { state: 'active', progress: 0.5 })]);
    const job = () => actor.jobs.getByExternalId('task-1')!;
    expect(collapsedHistory(job())).toEqual([{ state: 'active', atMs: T0 + 1000 }]);
    ingestAll(actor, [at(2, { state: 'retrying' })]);
    expect(collapsedHistory(job()).map((entry) => entry.state)).toEqual(['active', 'retrying', 'active']);
  });

  test('equal timestamps: the later arrival wins', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(1, { state: 'active' })], [at(1, { state: 'failed' })]);
    expect(actor.jobs.getByExternalId('task-1')!.state).toBe('failed');
  });

  test('scalar fields: a newer non-null value wins; an older event only fills gaps', () => {
    const actor = ingestAll(
      new ConnectionActor(CONNECTION, limits),
      [at(2, { state: 'active', workerId: 'w-new' })],
      [at(1, { state: 'queued', workerId: 'w-old', maxRetries: 3 })],
      [at(3, { state: 'active', progress: 0.5 })],
    );
    const job = actor.jobs.getByExternalId('task-1')!;
    expect(job.workerId).toBe('w-new');
    expect(job.maxRetries).toBe(3);
    expect(job.progress).toBe(0.5);
  });

  test('createdAt: the payload value, else the earliest event time', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(5, { state: 'active' })], [at(2, { state: 'queued' })]);
    expect(actor.jobs.getByExternalId('task-1')!.createdAtMs).toBe(T0 + 2000);
    ingestAll(actor, [at(6, { state: 'completed', createdAt: new Date(T0).toISOString() })]);
    expect(actor.jobs.getByExternalId('task-1')!.createdAtMs).toBe(T0);
  });

  test('durationMs is completedAt - startedAt when both are known', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(1, { state: 'active', startedAt: new Date(T0 + 1000).toISOString() })]);
    const job = () => actor.jobs.getByExternalId('task-1')!;
    expect(durationMsOf(job())).toBeNull();
    ingestAll(actor, [at(3, { state: 'completed', completedAt: new Date(T0 + 3500).toISOString() })]);
    expect(durationMsOf(job())).toBe(2500);
  });

  test('a retried job running again has no duration and no completion while it runs, never a negative one, and none of the last run\'s error', () => {
    const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
    const failed = { state: 'failed', attempt: 1, workerId: 'w1', startedAt: iso(1), completedAt: iso(2), error: 'boom', stacktrace: 'trace' };
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(2, failed)]);
    const row = () => actor.jobs.rowOfExternalId('task-1');
    expect(actor.jobs.table.durationMsOf(row())).toBe(1000);
    ingestAll(actor, [at(10, { state: 'queued', attempt: 2 })]);
    const queued = actor.jobs.getByExternalId('task-1')!;
    expect([queued.startedAtMs, queued.completedAtMs, queued.workerId, queued.error, durationMsOf(queued)]).toEqual([null, null, null, null, null]);
    ingestAll(actor, [at(11, { state: 'active', attempt: 2, workerId: 'w2', startedAt: iso(11) })]);
    const running = actor.jobs.getByExternalId('task-1')!;
    expect([running.startedAtMs, running.completedAtMs, running.workerId, running.error, durationMsOf(running)]).toEqual([T0 + 11_000, null, 'w2', null, null]);
    expect(actor.jobs.table.durationMsOf(row())).toBeNull();
    // a late event of the first run changes nothing of the second
    ingestAll(actor, [at(1.5, { state: 'active', attempt: 1, workerId: 'w1', startedAt: iso(1), completedAt: iso(2), error: 'late' })]);
    expect(actor.jobs.getByExternalId('task-1')).toMatchObject({ startedAtMs: T0 + 11_000, completedAtMs: null, workerId: 'w2', error: null });
    ingestAll(actor, [at(14, { state: 'completed', attempt: 2, workerId: 'w2', startedAt: iso(11), completedAt: iso(14) })]);
    const done = actor.jobs.getByExternalId('task-1')!;
    expect([done.state, durationMsOf(done), done.error]).toEqual(['completed', 3000, null]);
    expect([...actor.jobs.indexes.durationMs.scan('asc')].map((entry) => entry.key)).toEqual([3000]);
  });

  test('a job system that runs a job again without a new attempt number: a start after the last completion begins a new run', () => {
    const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(2, { state: 'failed', startedAt: iso(1), completedAt: iso(2), error: 'boom' })]);
    ingestAll(actor, [at(5, { state: 'active', startedAt: iso(5) })]);
    const job = actor.jobs.getByExternalId('task-1')!;
    expect([job.startedAtMs, job.completedAtMs, job.error, durationMsOf(job)]).toEqual([T0 + 5000, null, null, null]);
  });

  test("an earlier attempt's event that arrives after the next attempt began (Celery sends the retry's message before task-retried) changes nothing of the new run", () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(1, { state: 'active', attempt: 1 }), at(2, { state: 'queued', attempt: 2 })]);
    ingestAll(actor, [at(3, { state: 'retrying', attempt: 1, error: 'boom' })]);
    expect(actor.jobs.getByExternalId('task-1')).toMatchObject({ state: 'retrying', attempt: 2, error: null });
    ingestAll(actor, [at(4, { state: 'active', attempt: 2 })]);
    expect(actor.jobs.getByExternalId('task-1')).toMatchObject({ state: 'active', attempt: 2, error: null });
  });

  test('while a job runs its duration is null, even when an event reports a completion with it', () => {
    const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(3, { state: 'active', startedAt: iso(1), completedAt: iso(2) })]);
    expect(durationMsOf(actor.jobs.getByExternalId('task-1')!)).toBeNull();
  });

  test('attempt defaults to 1 and takes the newest report', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(1, { state: 'active' })]);
    expect(actor.jobs.getByExternalId('task-1')!.attempt).toBe(1);
    ingestAll(actor, [at(2, { state: 'active', attempt: 2 })]);
    expect(actor.jobs.getByExternalId('task-1')!.attempt).toBe(2);
  });

  test('indexes follow every change: sorting by state sees the current state', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, limits), [at(1, { state: 'queued' }), at(1, { externalId: 'task-2', state: 'active' })]);
    ingestAll(actor, [at(2, { state: 'failed' })]);
    const order = [...actor.jobs.indexes.state.scan('asc')].map((entry) => [entry.key, actor.jobs.table.externalId(entry.item)]);
    expect(order).toEqual([
      ['active', 'task-2'],
      ['failed', 'task-1'],
    ]);
    expect(actor.jobs.countWhere((job) => job.state === 'failed')).toBe(1);
    expect(actor.jobs.countWhere((job) => job.state === 'queued')).toBe(0);
  });

  test('a job naming a queue creates it; the new job and queue ids come from the record', () => {
    const actor = new ConnectionActor(CONNECTION, limits);
    const { record } = actor.decideIngest([at(1, { queue: 'emails' }), at(2, { externalId: 'task-2', queue: 'emails' })], T0);
    const [first, second] = record!.events as any[];
    expect(first.newJobId).toBeDefined();
    expect(first.newQueueId).toBeDefined();
    expect(second.newQueueId).toBeUndefined();
    actor.evolve(record!);
    expect(actor.jobs.getByExternalId('task-1')!.id).toBe(first.newJobId);
    expect(actor.queues.get('emails')!.id).toBe(first.newQueueId);
  });

  test('past the per-connection cap the oldest finished job is evicted first', () => {
    const actor = ingestAll(new ConnectionActor(CONNECTION, { ...limits, maxJobsPerConnection: 2 }), [
      at(1, { externalId: 'old-active', state: 'active' }),
      at(2, { externalId: 'done', state: 'completed' }),
      at(3, { externalId: 'new', state: 'queued' }),
    ]);
    expect(actor.jobs.size).toBe(2);
    expect(actor.jobs.getByExternalId('done')).toBeUndefined();
    expect(actor.jobs.getByExternalId('old-active')).toBeDefined();
  });

  test('past the cap, the oldest finished jobs go first however many older unfinished jobs precede them, then the oldest of any state', () => {
    const actor = new ConnectionActor(CONNECTION, { ...limits, maxJobsPerConnection: 6 });
    ingestAll(
      actor,
      [1, 2, 3, 4].map((second) => at(second, { externalId: `stuck-${second}`, state: 'queued' })),
      [at(5, { externalId: 'finishes-later', state: 'active' })],
      [at(6, { externalId: 'failed', state: 'failed' })],
    );
    expect(actor.jobs.size).toBe(6);
    // the active job completes: it is now the oldest finished one
    ingestAll(actor, [at(7, { externalId: 'finishes-later', state: 'completed' }), at(8, { externalId: 'new-1', state: 'queued' })]);
    expect(actor.jobs.getByExternalId('finishes-later')).toBeUndefined();
    expect(actor.jobs.getByExternalId('failed')).toBeDefined();
    // two more: the last finished job, then the oldest of the unfinished ones
    ingestAll(actor, [at(9, { externalId: 'new-2', state: 'queued' }), at(10, { externalId: 'new-3', state: 'queued' })]);
    expect(actor.jobs.size).toBe(6);
    expect(actor.jobs.getByExternalId('failed')).toBeUndefined();
    expect(actor.jobs.getByExternalId('stuck-1')).toBeUndefined();
    expect(['stuck-2', 'stuck-3', 'stuck-4', 'new-1', 'new-2', 'new-3'].every((id) => actor.jobs.getByExternalId(id) !== undefined)).toBe(true);
  });

  test('a record three jobs past the cap evicts the three oldest finished jobs, newer unfinished ones stay', () => {
    const actor = new ConnectionActor(CONNECTION, { ...limits, maxJobsPerConnection: 4 });
    ingestAll(actor, [
      at(1, { externalId: 'done-1', state: 'completed' }),
      at(2, { externalId: 'done-2', state: 'failed' }),
      at(3, { externalId: 'done-3', state: 'completed' }),
      at(4, { externalId: 'waiting', state: 'queued' }),
    ]);
    ingestAll(actor, [1, 2, 3].map((n) => at(4 + n, { externalId: `new-${n}`, state: 'queued' })));
    expect(actor.jobs.size).toBe(4);
    expect(['done-1', 'done-2', 'done-3'].map((id) => actor.jobs.getByExternalId(id))).toEqual([undefined, undefined, undefined]);
    expect(['waiting', 'new-1', 'new-2', 'new-3'].every((id) => actor.jobs.getByExternalId(id) !== undefined)).toBe(true);
  });

  test('a record that creates a job past the cap and then updates the job the cap evicts applies whole, and replays', () => {
    const capped = { ...limits, maxJobsPerConnection: 1 };
    const batches = [[at(1, { externalId: 'x', state: 'completed' })], [at(2, { externalId: 'y', state: 'queued' }), at(3, { externalId: 'x', state: 'failed' })]];
    const records: Parameters<ConnectionActor['evolve']>[0][] = [];
    const live = new ConnectionActor(CONNECTION, capped);
    for (const batch of batches) {
      const { record } = live.decideIngest(batch, T0);
      records.push(structuredClone(record!));
      live.evolve(record!);
    }
    const replayed = new ConnectionActor(CONNECTION, capped);
    for (const record of records) replayed.evolve(record);
    for (const actor of [live, replayed]) {
      expect(actor.jobs.size).toBe(1);
      expect(actor.jobs.getByExternalId('x')).toBeUndefined(); // the oldest finished job, updated or not
      expect(actor.jobs.getByExternalId('y')?.state).toBe('queued');
    }
  });

  test("a change set names jobs by ref: a job a later record evicts is not found through it, though its row holds another job", () => {
    const actor = new ConnectionActor(CONNECTION, { ...limits, maxJobsPerConnection: 1 });
    const evolveBatch = (batch: unknown[]) => actor.evolve(actor.decideIngest(batch, T0).record!);
    const first = evolveBatch([at(1, { externalId: 'x', state: 'completed' })]);
    const [xRef] = [...first.jobs];
    expect(actor.jobs.readRefListed(xRef!)?.externalId).toBe('x');
    const second = evolveBatch([at(2, { externalId: 'y', state: 'queued' })]);
    expect(actor.jobs.readRefListed(xRef!)).toBeUndefined();
    const [yRef] = [...second.jobs];
    expect(actor.jobs.readRefListed(yRef!)?.externalId).toBe('y');
    evolveBatch([at(3, { externalId: 'z', state: 'queued' })]); // takes the row x left
    expect(actor.jobs.rowOfExternalId('z')).toBe(Number(xRef) % 2 ** 32);
    expect(actor.jobs.readRefListed(xRef!)).toBeUndefined();
    expect(actor.jobs.readRefListed(yRef!)).toBeUndefined();
  });
});
