/** BullMQ stream entries -> jobwatch events: the state mapping, attempts, errors, Redis-clock timestamps. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { factsFromHash, FACT_FIELDS, JobFacts } from '../src/job-facts.js';
import { Normalizer, parentExternalIdOf, payloadWanted, progressFraction } from '../src/normalize.js';
import { PayloadFields } from '../src/payload-fields.js';
import { assertFields } from './support/fields.js';

const CONNECTION = '0190b6d6-0000-7000-8000-000000000001';
const T0 = 1_800_000_000_000;
let seq = 0;
const entry = (ms, fields) => ({ id: `${ms}-${seq++}`, fields });
const hash = (values) => FACT_FIELDS.map((field) => values[field] ?? null);

function normalizer(payloads = new PayloadFields()) {
  return new Normalizer(CONNECTION, new JobFacts(), (_queue, name) => name ? `${name}@host` : undefined, payloads);
}
/**
 * What job-payloads.js read of a job: its data (JSON text, or only its size when too large) and new log lines.
 * @param {string | null} data @param {string[]} [lines] @param {Record<string, unknown>} [extra]
 */
const read = (data, lines = [], extra = {}) => ({
  dataBytes: data === null ? 0 : Buffer.byteLength(data),
  data,
  returnvalueBytes: 0,
  returnvalue: null,
  logs: { count: lines.length, skipped: 0, sha: 'sha', lines },
  ...extra,
});

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

  test('retries read late (the hash already holds a later failure) keep each attempt its own error and trace', () => {
    const n = normalizer();
    const traces = ['TypeError: planned failure 1\n    at a (w.mjs:1)', 'Error: planned failure 2\n    at b (w.mjs:2)'];
    const late = factsFromHash(hash({ name: 'sync', atm: '2', failedReason: 'planned failure 2', stacktrace: JSON.stringify(traces), opts: '{"attempts":3}' }));
    const events = n.normalizeEntries(
      'q',
      [
        entry(T0, { event: 'added', jobId: '3', name: 'sync' }),
        entry(T0 + 1, { event: 'active', jobId: '3' }),
        entry(T0 + 2, { event: 'delayed', jobId: '3', delay: String(T0 + 100) }),
        entry(T0 + 100, { event: 'waiting', jobId: '3', prev: 'delayed' }),
        entry(T0 + 101, { event: 'active', jobId: '3' }),
        entry(T0 + 102, { event: 'delayed', jobId: '3', delay: String(T0 + 200) }),
      ],
      new Map([[JobFacts.key('q', '3'), late]]),
    );
    const retries = events.filter((event) => event.job.state === 'retrying').map((event) => [event.job.attempt, event.job.error, event.job.stacktrace]);
    assert.deepEqual(retries, [
      [1, 'planned failure 1', traces[0]],
      [2, 'planned failure 2', traces[1]],
    ]);
  });

  test('progress: a number is a percentage, turned into 0..1; an object is the progress object, masked; any other value stays in extensions only', () => {
    const n = normalizer();
    const events = n.normalizeEntries('q', [
      entry(T0, { event: 'progress', jobId: '9', data: '40' }),
      entry(T0 + 1, { event: 'progress', jobId: '9', data: '{"step":"upload","done":3,"total":4,"auth":{"token":"t0k"}}' }),
      entry(T0 + 2, { event: 'progress', jobId: '9', data: '"halfway"' }),
    ]);
    assertFields(events[0].job, { state: 'active', progress: 0.4 });
    assert.deepEqual(events[1].job.progress, { step: 'upload', done: 3, total: 4, auth: { token: '[redacted]' } });
    assert.equal(events[1].job.extensions.progress, undefined);
    assert.equal(events[2].job.progress, undefined);
    assert.equal(events[2].job.extensions.progress, 'halfway');
    assert.deepEqual([progressFraction(250), progressFraction(-3), progressFraction('x')], [1, 0, null]);
    // a progress object within jobwatch's 16 KiB: its largest value cut, marked
    const large = n.normalizeEntries('q', [entry(T0 + 3, { event: 'progress', jobId: '9', data: JSON.stringify({ step: 'x', log: 'x'.repeat(40_000) }) })])[0];
    assert.equal(large.job.progress.step, 'x');
    assert.ok(large.job.progress.log.endsWith('\u2026[truncated]'));
    assert.ok(Buffer.byteLength(JSON.stringify(large.job.progress)) <= 15_000);
  });

  test("a job's data goes with its first event once, masked; --omit-args leaves it out by name (* for any characters); log lines go with the event after them", () => {
    const n = normalizer(new PayloadFields({ omitArgs: ['charge-*'] }));
    const data = JSON.stringify({ userId: 42, card: { card_number: '4242', exp: '12/30' } });
    const [added, active] = n.normalizeEntries(
      'q',
      [entry(T0, { event: 'added', jobId: '1', name: 'export' }), entry(T0 + 1, { event: 'active', jobId: '1' })],
      new Map(),
      new Map([[JobFacts.key('q', '1'), read(data, ['starting'])]]),
    );
    assert.deepEqual(added.job.args, { userId: 42, card: { card_number: '[redacted]', exp: '12/30' } });
    assert.deepEqual(added.job.logs, ['starting']);
    assert.equal(active.job.args, undefined);
    assertFields(n.facts.get('q', '1'), { dataRead: true, logCount: 1, logSha: 'sha' });
    // what to read next: the data no more, the log after events of a run
    assert.deepEqual(payloadWanted({ event: 'progress', jobId: '1' }, n.facts.get('q', '1')), { data: false, logs: true });
    assert.deepEqual(payloadWanted({ event: 'added', jobId: '2' }, n.facts.get('q', '2')), { data: true, logs: false });
    assert.deepEqual(payloadWanted({ event: 'waiting', jobId: '1', prev: 'active' }, n.facts.get('q', '1')), { data: false, logs: true });
    const [charged] = n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '3', name: 'charge-card' })], new Map(), new Map([[JobFacts.key('q', '3'), read('{"amount":5}')]]));
    assert.equal('args' in charged.job, false);
    // too large to read: its size, marked; log lines the read left out are said first
    const [huge] = n.normalizeEntries('q', [entry(T0, { event: 'active', jobId: '4', name: 'x' })], new Map(), new Map([[JobFacts.key('q', '4'), read(null, ['last'], { dataBytes: 5_000_000, logs: { count: 1200, skipped: 201, sha: 's', lines: ['last'] } })]]));
    assert.equal(huge.job.args, '\u2026[truncated: 5000000 bytes]');
    assert.deepEqual(huge.job.logs, ['\u2026[truncated: 201 earlier log lines not read]', 'last']);
    // lines Redis counted as few bytes take six times as many as JSON: the oldest go, said in the first line
    const controls = '\u0001'.repeat(16_000);
    const [noisy] = n.normalizeEntries('q', [entry(T0, { event: 'active', jobId: '8', name: 'x' })], new Map(), new Map([[JobFacts.key('q', '8'), read(null, Array.from({ length: 12 }, () => controls))]]));
    assert.equal(noisy.job.logs[0], '\u2026[truncated: 10 earlier log lines not read]');
    assert.equal(noisy.job.logs.length, 3);
    assert.ok(Buffer.byteLength(JSON.stringify(noisy.job.logs)) < 200_000);
  });

  test("a completed entry carries the return value, masked and bounded; a reconciled completed job its hash's", () => {
    const n = normalizer();
    const [done] = n.normalizeEntries('q', [entry(T0, { event: 'completed', jobId: '5', returnvalue: '{"sent":true,"session":{"cookie":"c"}}', prev: 'active' })]);
    assert.deepEqual(done.job.result, { sent: true, session: { cookie: '[redacted]' } });
    const [big] = n.normalizeEntries('q', [entry(T0, { event: 'completed', jobId: '6', returnvalue: JSON.stringify({ rows: Array.from({ length: 3000 }, (_, i) => `row ${i}`) }), prev: 'active' })]);
    assert.equal(big.job.result.rows.length, 1001);
    assert.equal(big.job.result.rows[1000], '\u2026[truncated: 2000 more items]');
    n.takeRead('q', new Map([[JobFacts.key('q', '7'), read(null, [], { returnvalueBytes: 4, returnvalue: '"ok"' })]]));
    const reconciled = n.jobEvent('q', '7', T0, { state: 'completed', native: 'completed' }, 'reconciled');
    assert.equal(reconciled.job.result, 'ok');
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
    const n = new Normalizer(CONNECTION, new JobFacts(), () => undefined, new PayloadFields(), 'bull');
    const fresh = new Map([[JobFacts.key('tracks', '2'), factsFromHash(hash({ name: 'render-track', parentKey: 'bull:albums:1' }))]]);
    const [added] = n.normalizeEntries('tracks', [entry(T0, { event: 'added', jobId: '2', name: 'render-track' })], fresh);
    assert.equal(added.job.parentExternalId, 'albums:1');
    assert.equal(added.job.extensions.parentKey, 'bull:albums:1');
  });
});
