/**
 * Each kind of rule fires once when its condition holds and resolves once when it stops,
 * read from the same indexes and tallies the views read; the clock is the injected one.
 */
import { describe, expect, test } from 'bun:test';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { alertFixture } from './alert-fixture.ts';

const MINUTE_MS = 60_000;

function finishedJobs(connectionId: string, atMs: number, count: number, state: 'completed' | 'failed', prefix: string, job: Record<string, unknown> = {}) {
  return Array.from({ length: count }, (_, index) =>
    jobEvent(connectionId, atMs, { externalId: `${prefix}-${index}`, state, completedAt: new Date(atMs).toISOString(), ...job }),
  );
}

describe('alert evaluation', () => {
  test('failure_rate: fires over the threshold with enough finished jobs, notifies each channel once, resolves when the window holds successes', async () => {
    const f = await alertFixture();
    const a = await f.createChannel({ name: 'a' });
    const b = await f.createChannel({ name: 'b', format: 'slack' });
    const rule = await f.createRule({ kind: 'failure_rate', queue: 'default', threshold: 0.5, windowSeconds: 300, channelIds: [a.channel.id, b.channel.id] });

    await f.ingest(finishedJobs(f.connection.id, T0 - 1_000, 4, 'failed', 'few'));
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok'); // 4 finished: under the minimum of 5

    await f.ingest(finishedJobs(f.connection.id, T0 - 1_000, 1, 'failed', 'fifth'));
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: 1, firingSinceMs: T0 });
    expect(f.pending().map((delivery) => [delivery.channelId, delivery.notice.status])).toEqual([
      [a.channel.id, 'firing'],
      [b.channel.id, 'firing'],
    ]);

    f.t.clock.advance(MINUTE_MS);
    await f.evaluate();
    expect(f.pending()).toHaveLength(2); // still firing: nothing new

    f.t.clock.advance(6 * MINUTE_MS);
    await f.ingest(finishedJobs(f.connection.id, f.t.clock.nowMs() - 1_000, 5, 'completed', 'ok'));
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'resolved', firingSinceMs: T0 });
    expect(f.pending().filter((delivery) => delivery.notice.status === 'resolved')).toHaveLength(2);
    expect(f.book().transitions.map((transition) => transition.status)).toEqual(['firing', 'resolved']);
  });

  test('failure_rate over the whole connection counts every queue; another queue narrows it out', async () => {
    const f = await alertFixture();
    const everywhere = await f.createRule({ kind: 'failure_rate', threshold: 0.2, windowSeconds: 600 });
    const other = await f.createRule({ kind: 'failure_rate', queue: 'other', threshold: 0.2, windowSeconds: 600 });
    await f.ingest(finishedJobs(f.connection.id, T0 - 1_000, 5, 'failed', 'x', { queue: 'emails' }));
    await f.evaluate();
    expect(f.stateOf(everywhere.id).status).toBe('firing');
    expect(f.stateOf(other.id).status).toBe('ok');
  });

  test('queue_depth: fires only once the depth stayed above the threshold for the whole window; a dip starts it over', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'queue_depth', queue: 'default', threshold: 10, windowSeconds: 60 });
    await f.ingest([queueEvent(f.connection.id, T0, { depth: 20 })]);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'ok', breachSinceMs: T0 });

    f.t.clock.advance(30_000);
    await f.ingest([queueEvent(f.connection.id, f.t.clock.nowMs(), { depth: 5 })]);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'ok', breachSinceMs: null });

    f.t.clock.advance(1_000);
    const restartMs = f.t.clock.nowMs();
    await f.ingest([queueEvent(f.connection.id, restartMs, { depth: 30 })]);
    await f.evaluate();
    f.t.clock.advance(59_000);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok');
    f.t.clock.advance(1_000);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: 30, breachSinceMs: restartMs });

    await f.ingest([queueEvent(f.connection.id, f.t.clock.nowMs(), { depth: 0 })]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('resolved');
  });

  test('queue_depth skips a paused queue (it grows by design) unless the rule includes paused queues; other kinds refuse the option', async () => {
    const f = await alertFixture();
    const skips = await f.createRule({ kind: 'queue_depth', queue: 'default', threshold: 10, windowSeconds: 60 });
    const anyQueue = await f.createRule({ kind: 'queue_depth', threshold: 10, windowSeconds: 60 });
    const includes = await f.createRule({ kind: 'queue_depth', queue: 'default', threshold: 10, windowSeconds: 60, includePaused: true });
    await f.ingest([queueEvent(f.connection.id, T0, { depth: 50, extensions: { paused: true } })]);
    await f.evaluate();
    f.t.clock.advance(61_000);
    await f.evaluate();
    expect([skips, anyQueue, includes].map((rule) => f.stateOf(rule.id).status)).toEqual(['ok', 'ok', 'firing']);
    const listed = (await f.t.request('GET', '/api/alert-rules', { headers: { cookie: f.cookie } })).json.data;
    expect(listed.map((rule: { includePaused: boolean; condition: string }) => [rule.includePaused, rule.condition])).toEqual([
      [false, 'depth > 10 for 1 min, queue default'],
      [false, 'depth > 10 for 1 min'],
      [true, 'depth > 10 for 1 min, queue default, paused queues too'],
    ]);
    expect(listed[0].current).toEqual({ value: null, breached: false, paused: true, text: 'paused' });
    // resumed, the same depth fires once it held for the window
    await f.ingest([queueEvent(f.connection.id, f.t.clock.nowMs(), { depth: 50, extensions: { paused: false } })]);
    await f.evaluate();
    f.t.clock.advance(61_000);
    await f.evaluate();
    expect(f.stateOf(skips.id).status).toBe('firing');
    const refused = await f.t.request('POST', '/api/alert-rules', { body: { connectionId: f.connection.id, name: 'x', kind: 'job_stuck', windowSeconds: 60, channelIds: [], includePaused: true }, headers: { cookie: f.cookie } });
    expect(refused.json.error.details).toEqual({ includePaused: ['a job_stuck rule does not look at whether queues are paused'] });
  });

  test('worker_offline: fires when no worker was alive for the window, resolves on a heartbeat', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'worker_offline', windowSeconds: 60 });
    await f.ingest([workerEvent(f.connection.id, T0, { state: 'online' })]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok');

    f.t.clock.advance(60_000);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok'); // 60 s is not more than the window
    f.t.clock.advance(1_000);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: 61 });

    await f.ingest([workerEvent(f.connection.id, f.t.clock.nowMs(), { state: 'heartbeat' })]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('resolved');
  });

  test('worker_offline narrowed to a queue looks only at the workers consuming it', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'worker_offline', queue: 'emails', windowSeconds: 60 });
    await f.ingest([workerEvent(f.connection.id, T0, { state: 'online', queues: ['default'] })]);
    f.t.clock.advance(61_000);
    await f.ingest([workerEvent(f.connection.id, f.t.clock.nowMs(), { state: 'heartbeat' })]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('firing'); // the live worker does not consume emails
  });

  test('task_missing: fires when the task has not completed within the window (counted from the rule when it never ran), resolves on a completion', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'task_missing', task: 'reports.nightly', windowSeconds: 3_600 });
    f.t.clock.advance(3_600_000);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok');
    f.t.clock.advance(1_000);
    // a failed run is not a completion
    await f.ingest(finishedJobs(f.connection.id, f.t.clock.nowMs(), 1, 'failed', 'run', { name: 'reports.nightly' }));
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: 3_601 });

    await f.ingest(finishedJobs(f.connection.id, f.t.clock.nowMs(), 1, 'completed', 'ok', { name: 'reports.nightly' }));
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('resolved');
  });

  test('job_stuck: fires when a job of the task stays active past the window, resolves when it finishes', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'job_stuck', task: 'tasks.import', windowSeconds: 600 });
    await f.ingest([
      jobEvent(f.connection.id, T0, { externalId: 'long', name: 'tasks.import', state: 'active', startedAt: new Date(T0).toISOString() }),
      jobEvent(f.connection.id, T0 - 3_600_000, { externalId: 'other', name: 'tasks.other', state: 'active', startedAt: new Date(T0 - 3_600_000).toISOString() }),
    ]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok'); // the other task's hour-old job is not this rule's
    f.t.clock.advance(601_000);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: 601 });

    await f.ingest([jobEvent(f.connection.id, f.t.clock.nowMs(), { externalId: 'long', name: 'tasks.import', state: 'completed' })]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('resolved');
  });

  test('workflow_stuck: fires when a root stays unfinished past the window, and at once for a parent waiting on a failed child; resolves when they finish', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'workflow_stuck', task: 'render-album', windowSeconds: 600 });
    const other = await f.createRule({ kind: 'workflow_stuck', task: 'other-root', windowSeconds: 600 });
    await f.ingest([
      jobEvent(f.connection.id, T0, { externalId: 'album', name: 'render-album', state: 'queued', extensions: { bullmqState: 'waiting-children' } }),
      jobEvent(f.connection.id, T0, { externalId: 'track-1', name: 'render-track', state: 'active', parentExternalId: 'album' }),
      // a job alone is no workflow, however long it runs
      jobEvent(f.connection.id, T0 - 3_600_000, { externalId: 'alone', name: 'render-album', state: 'active', startedAt: new Date(T0 - 3_600_000).toISOString() }),
    ]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok');
    f.t.clock.advance(601_000);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: 601 });
    expect(f.stateOf(other.id).status).toBe('ok'); // another root's task
    await f.ingest([jobEvent(f.connection.id, f.t.clock.nowMs(), { externalId: 'album', name: 'render-album', state: 'completed', parentExternalId: null })]);
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('resolved');

    // a waiting parent with a failed child fires without waiting for the window
    const failing = await f.createRule({ kind: 'workflow_stuck', windowSeconds: 3_600 });
    const nowMs = f.t.clock.nowMs();
    await f.ingest([
      jobEvent(f.connection.id, nowMs, { externalId: 'flow', name: 'render-film', state: 'queued', extensions: { bullmqState: 'waiting-children' } }),
      jobEvent(f.connection.id, nowMs, { externalId: 'frame', name: 'render-frame', state: 'failed', parentExternalId: 'flow', completedAt: new Date(nowMs).toISOString() }),
    ]);
    await f.evaluate();
    expect(f.stateOf(failing.id)).toMatchObject({ status: 'firing', firedValue: 0 });
    await f.ingest([jobEvent(f.connection.id, nowMs + 1_000, { externalId: 'frame', name: 'render-frame', state: 'completed', parentExternalId: 'flow' })]);
    await f.ingest([jobEvent(f.connection.id, nowMs + 2_000, { externalId: 'flow', name: 'render-film', state: 'completed' })]);
    await f.evaluate();
    expect(f.stateOf(failing.id).status).toBe('resolved');
  });

  test('a quiet evaluation writes nothing to the log', async () => {
    const f = await alertFixture();
    await f.createRule({ kind: 'job_stuck', windowSeconds: 600 });
    const before = f.records.length;
    await f.evaluate();
    f.t.clock.advance(10_000);
    await f.evaluate();
    expect(f.records.length).toBe(before);
  });
});

describe('alert state across a restart', () => {
  async function firingFixture() {
    const f = await alertFixture();
    const channel = await f.createChannel();
    const rule = await f.createRule({ kind: 'failure_rate', threshold: 0.5, windowSeconds: 600, channelIds: [channel.channel.id] });
    await f.ingest(finishedJobs(f.connection.id, T0 - 1_000, 5, 'failed', 'x'));
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('firing');
    return { f, rule, channel };
  }

  test('replaying the log and restoring a snapshot both hold the firing rule and its waiting delivery; evaluating again notifies nothing new', async () => {
    const { f, rule } = await firingFixture();
    for (const engine of [f.replayed(), f.restored()]) {
      const alerts = engine.connection(f.connection.id)!.alerts;
      expect(alerts.stateOf(rule.id)).toEqual(f.stateOf(rule.id));
      expect([...alerts.pending.values()]).toEqual(f.pending());
      expect(alerts.channels).toEqual(f.book().channels);
    }
    // on the restarted engine the same evaluation decides nothing
    const { decideEvaluation } = await import('../../actors/alerts/alert-evaluation.ts');
    const restarted = f.restored();
    expect(decideEvaluation(restarted.connection(f.connection.id)!, f.t.clock.nowMs())).toBeNull();
  });

  test('a snapshot written before alerts existed (no alerts section) still loads, with no alerts', async () => {
    const { f } = await firingFixture();
    const engine = f.restored((chunk) => {
      if (chunk.k === 'connection') delete chunk.alerts;
      return chunk;
    });
    const actor = engine.connection(f.connection.id)!;
    expect(actor.alerts.isEmpty).toBe(true);
    expect(actor.jobs.size).toBe(5);
  });

  test('delivery outcomes replay too: a delivered notice leaves the queue and stays in the history', async () => {
    const { f, channel } = await firingFixture();
    const [delivery] = f.pending();
    await f.t.alerts.recordAttempt(f.connection.id, delivery!.id, { ok: true, httpStatus: 204, error: null, retryable: false });
    for (const engine of [f.replayed(), f.restored()]) {
      const alerts = engine.connection(f.connection.id)!.alerts;
      expect(alerts.pending.size).toBe(0);
      expect(alerts.history.get(channel.channel.id)!.map((attempt) => [attempt.outcome, attempt.httpStatus])).toEqual([['delivered', 204]]);
    }
  });
});
