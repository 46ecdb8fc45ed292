/** BullMQ stream entries -> jobwatch events: the state mapping, attempts, errors, Redis-clock timestamps. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { factsFromHash, FACT_FIELDS, JobFacts } from '../src/job-facts.js';
import { Normalizer, parentExternalIdOf, progressFraction } from '../src/normalize.js';
import { assertFields } from './support/fields.js';

const CONNECTION = '0190b6d6-0000-7000-8000-000000000001';
const T0 = 1_800_000_000_000;
let seq = 0;
const entry = (ms, fields) => ({ id: `${ms}-${seq++}`, fields });
const hash = (values) => FACT_FIELDS.map((field) => values[field] ?? null);

function normalizer() {
  return new Normalizer(CONNECTION, new JobFacts(), (_queue, name) => name ? `${name}@host` : undefined);
}

describe('normalize', () => {
  test('a job that fails once, waits for its backoff, and completes: queued, active, retrying with its error, active, completed', () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('mail', '7'), factsFromHash(hash({ name: 'send', timestamp: String(T0 - 5), opts: '{"attempts":3}', pb: 'w1' }))]]);
    const first = n.normalizeEntries('mail', [entry(T0, { event: 'added', jobId: '7', name: 'send' }), entry(T0 + 1, { event: 'active', jobId: '7', prev: 'waiting' })], fresh);
    const failedHash = factsFromHash(hash({ name: 'send', atm: '1', failedReason: 'boom', stacktrace: JSON.stringify(['Error: boom\n at x']), pb: 'w1' }));
    const second = n.normalizeEntries('mail', [entry(T0 + 10, { event: 'delayed', jobId: '7', delay: String(T0 + 510) })], new Map([[JobFacts.key('mail', '7'), failedHash]]));
    const third = n.normalizeEntries('mail', [
    entry(T0 + 511, { event: 'waiting', jobId: '7', prev: 'delayed' }),
    entry(T0 + 512, { event: 'active', jobId: '7', prev: 'waiting' }),
    entry(T0 + 600, { event: 'completed', jobId: '7', returnvalue: '{}', prev: 'active' })]
    );
    const events = [...first, ...second, ...third];
    assert.deepEqual(events.map((event) => [event.job.state, event.job.attempt]), [
    ['queued', 1],
    ['active', 1],
    ['retrying', 1],
    ['queued', 2],
    ['active', 2],
    ['completed', 2]]
    );
    const retrying = events[2];
    assert.equal(retrying.job.error, 'boom');
    assert.ok(retrying.job.stacktrace.includes('Error: boom'));
    assert.equal(retrying.job.extensions.eta, new Date(T0 + 510).toISOString());
    const completed = events[5];
    assertFields(completed, { type: 'job_state_change', framework: 'bullmq', connectionId: CONNECTION, timestamp: new Date(T0 + 600).toISOString() });
    assertFields(completed.job, { externalId: 'mail:7', name: 'send', queue: 'mail', maxRetries: 2, workerId: 'w1@host' });
    assert.equal(completed.job.startedAt, new Date(T0 + 512).toISOString());
    assert.equal(completed.job.completedAt, new Date(T0 + 600).toISOString());
    assert.equal(completed.job.createdAt, new Date(T0).toISOString());
    assert.equal(completed.job.extensions.bullmqState, 'completed');
    assert.equal(completed.job.extensions.eta, undefined); // a backoff is not a schedule the job keeps
  });

  test('the same job id in two queues are two jobs', () => {
    const n = normalizer();
    const a = n.normalizeEntries('a', [entry(T0, { event: 'added', jobId: '1', name: 'x' })])[0];
    const b = n.normalizeEntries('b', [entry(T0, { event: 'added', jobId: '1', name: 'y' })])[0];
    assert.deepEqual([a.job.externalId, b.job.externalId], ['a:1', 'b:1']);
    assert.deepEqual([a.job.name, b.job.name], ['x', 'y']);
  });

  test('a delayed job is scheduled with its time; removed while pending is cancelled; removed after finishing is no event', () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('q', '2'), factsFromHash(hash({ name: 'later', delay: '60000', timestamp: String(T0) }))]]);
    const events = n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '2', name: 'later' }), entry(T0, { event: 'delayed', jobId: '2', delay: String(T0 + 60000) })], fresh);
    // "added" and "delayed" come from one script: one event says both, with the time and the name
    assert.deepEqual(events.map((event) => event.job.state), ['scheduled']);
    assertFields(events[0].job, { name: 'later', attempt: 1, createdAt: new Date(T0).toISOString() });
    assert.equal(events[0].job.extensions.eta, new Date(T0 + 60000).toISOString());
    // split across two reads, each entry is an event: the second adds the time
    const m = normalizer();
    const split = [...m.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '2', name: 'later' })], fresh), ...m.normalizeEntries('q', [entry(T0, { event: 'delayed', jobId: '2', delay: String(T0 + 60000) })])];
    assert.deepEqual(split.map((event) => [event.job.state, event.job.extensions.eta ?? null]), [['scheduled', null], ['scheduled', new Date(T0 + 60000).toISOString()]]);
    const started = n.normalizeEntries('q', [entry(T0 + 60001, { event: 'active', jobId: '2' })])[0];
    assert.equal(started.job.extensions.eta, new Date(T0 + 60000).toISOString()); // jobwatch keeps showing when it was scheduled for
    const removed = n.normalizeEntries('q', [entry(T0 + 5, { event: 'removed', jobId: '2', prev: 'waiting' }), entry(T0 + 6, { event: 'removed', jobId: '3', prev: 'completed' })]);
    assert.deepEqual(removed.map((event) => [event.job.externalId, event.job.state]), [['q:2', 'cancelled']]);
    assert.equal(removed[0].job.completedAt, new Date(T0 + 5).toISOString());
  });

  test('a stalled job goes back to queued with the stall in extensions, not retrying; its rerun keeps the attempt', () => {
    const n = normalizer();
    n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '5', name: 'long' }), entry(T0 + 1, { event: 'active', jobId: '5' })]);
    const stall = n.normalizeEntries('q', [entry(T0 + 100, { event: 'waiting', jobId: '5', prev: 'active' }), entry(T0 + 100, { event: 'stalled', jobId: '5' })]);
    assert.deepEqual(stall.map((event) => event.job.state), ['queued']);
    assertFields(stall[0].job.extensions, { stalled: true, stalledAt: new Date(T0 + 100).toISOString() });
    const rerun = n.normalizeEntries('q', [entry(T0 + 200, { event: 'active', jobId: '5' })])[0];
    assert.equal(rerun.job.attempt, 1);
    // the stall check's two entries may fall in different milliseconds on a busy Redis
    const later = n.normalizeEntries('q', [entry(T0 + 300, { event: 'waiting', jobId: '5', prev: 'active' }), entry(T0 + 301, { event: 'stalled', jobId: '5' })]);
    assert.deepEqual(later.map((event) => event.job.state), ['queued']);
    // a move back to waiting with no stall entry after it for the job is a retry
    const retry = n.normalizeEntries('q', [entry(T0 + 400, { event: 'active', jobId: '5' }), entry(T0 + 500, { event: 'waiting', jobId: '5', prev: 'active' }), entry(T0 + 500, { event: 'stalled', jobId: '6' })]);
    assert.deepEqual(retry.map((event) => event.job.state), ['active', 'retrying', 'queued']);
  });

  test('a job whose hash is read after it ran and backed off: added is its first attempt, queued, not scheduled', () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('q', '7'), factsFromHash(hash({ name: 'flaky', delay: '2000', atm: '1', attempts: '3', timestamp: String(T0) }))]]);
    const events = n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '7', name: 'flaky' }), entry(T0 + 1, { event: 'active', jobId: '7' })], fresh);
    assert.deepEqual(events.map((event) => [event.job.state, event.job.attempt]), [['queued', 1], ['active', 1]]);
  });

  test('progress: a number is a percentage, turned into 0..1; any other value stays in extensions only', () => {
    const n = normalizer();
    const events = n.normalizeEntries('q', [entry(T0, { event: 'progress', jobId: '9', data: '40' }), entry(T0 + 1, { event: 'progress', jobId: '9', data: '{"step":"upload"}' })]);
    assertFields(events[0].job, { state: 'active', progress: 0.4 });
    assert.equal(events[1].job.progress, undefined);
    assert.deepEqual(events[1].job.extensions.progress, { step: 'upload' });
    assert.deepEqual([progressFraction(250), progressFraction(-3), progressFraction('x')], [1, 0, null]);
    const large = n.normalizeEntries('q', [entry(T0 + 2, { event: 'progress', jobId: '9', data: JSON.stringify({ log: 'x'.repeat(10_000) }) })])[0];
    assertFields(large.job.extensions, { progressTooLarge: true });
    assert.equal(large.job.extensions.progress, undefined);
  });

  test("a progress of 40 nested arrays is bounded: the event stays within jobwatch's 8 levels, with a mark where it was cut", () => {
    let nested = 1;
    for (let level = 0; level < 40; level++) nested = [nested];
    const [event] = normalizer().normalizeEntries('q', [entry(T0, { event: 'progress', jobId: '9', data: JSON.stringify(nested) })]);
    // extensions is level 1, progress level 2: six more arrays, then the mark
    let kept = event.job.extensions.progress;
    for (let level = 2; level <= 8; level++) kept = kept[0];
    assert.equal(kept, '\u2026[truncated: deeper than 8 levels]');
  });

  test("the app's names, errors and stack traces are cut to jobwatch's lengths with a visible mark", () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('q', '5'), factsFromHash(hash({ name: 'n'.repeat(2000), stacktrace: JSON.stringify(['s'.repeat(60_000)]) }))]]);
    const [event] = n.normalizeEntries('q', [entry(T0, { event: 'failed', jobId: '5', failedReason: 'e'.repeat(20_000), prev: 'active' })], fresh);
    assert.equal(event.job.name.length, 1024);
    assert.equal(event.job.error.length, 10_000);
    assert.equal(event.job.stacktrace.length, 50_000);
    for (const field of ['name', 'error', 'stacktrace']) assert.equal(event.job[field].endsWith('\u2026[truncated]'), true);
  });

  test('a failed job carries the failed reason from the stream; queue-level events give nothing', () => {
    const n = normalizer();
    const events = n.normalizeEntries('q', [
    entry(T0, { event: 'failed', jobId: '4', failedReason: 'out of memory', prev: 'active' }),
    entry(T0, { event: 'drained' }),
    entry(T0, { event: 'retries-exhausted', jobId: '4', attemptsMade: '3' })]
    );
    assert.equal(events.length, 1);
    assertFields(events[0].job, { state: 'failed', error: 'out of memory', name: 'unknown' });
  });

  test('a job hash that is gone reads as null; options and stack traces are parsed', () => {
    assert.equal(factsFromHash(FACT_FIELDS.map(() => null)), null);
    const facts = factsFromHash(hash({ opts: '{"attempts":5}', stacktrace: JSON.stringify(['first', 'last']), progress: '{"a":1}', atm: '2', pb: 'w9' }));
    assertFields(facts, { attempts: 5, stacktrace: 'last', progress: { a: 1 }, attemptsMade: 2, processedBy: 'w9' });
  });
});

describe('flows', () => {
  test("a flow child's parentKey becomes its parentExternalId, `<queue>:<id>` under the agent's prefix; another prefix's parent is left out", () => {
    assert.equal(parentExternalIdOf('bull:albums:1', 'bull'), 'albums:1');
    assert.equal(parentExternalIdOf('app:bull:albums:job:with:colons', 'app:bull'), 'albums:job:with:colons');
    assert.equal(parentExternalIdOf('other:albums:1', 'bull'), undefined);
    assert.equal(parentExternalIdOf('bull:albums:', 'bull'), undefined);
    assert.equal(parentExternalIdOf(undefined, 'bull'), undefined);
    const n = new Normalizer(CONNECTION, new JobFacts(), () => undefined, 'bull');
    const fresh = new Map([[JobFacts.key('tracks', '2'), factsFromHash(hash({ name: 'render-track', parentKey: 'bull:albums:1' }))]]);
    const [added] = n.normalizeEntries('tracks', [entry(T0, { event: 'added', jobId: '2', name: 'render-track' })], fresh);
    assert.equal(added.job.parentExternalId, 'albums:1');
    assert.equal(added.job.extensions.parentKey, 'bull:albums:1');
  });
});
