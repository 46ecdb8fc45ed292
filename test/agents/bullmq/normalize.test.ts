/** BullMQ stream entries -> jobwatch events: the state mapping, attempts, errors, Redis-clock timestamps. */
import { describe, expect, test } from 'bun:test';
import { factsFromHash, FACT_FIELDS, JobFacts } from '../../../agents/bullmq/src/job-facts.js';
import { Normalizer, parentExternalIdOf, progressFraction } from '../../../agents/bullmq/src/normalize.js';
import { jsonObjectProblem } from '../../../actors/ingest/json-object-limits.ts';

const CONNECTION = '0190b6d6-0000-7000-8000-000000000001';
const T0 = 1_800_000_000_000;
let seq = 0;
const entry = (ms: number, fields: Record<string, string>) => ({ id: `${ms}-${seq++}`, fields });
const hash = (values: Record<string, string>) => FACT_FIELDS.map((field) => values[field] ?? null);

function normalizer() {
  return new Normalizer(CONNECTION, new JobFacts(), (_queue: string, name: string | undefined) => (name ? `${name}@host` : undefined));
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
      entry(T0 + 600, { event: 'completed', jobId: '7', returnvalue: '{}', prev: 'active' }),
    ]);
    const events = [...first, ...second, ...third];
    expect(events.map((event: any) => [event.job.state, event.job.attempt])).toEqual([
      ['queued', 1],
      ['active', 1],
      ['retrying', 1],
      ['queued', 2],
      ['active', 2],
      ['completed', 2],
    ]);
    const retrying: any = events[2];
    expect(retrying.job.error).toBe('boom');
    expect(retrying.job.stacktrace).toContain('Error: boom');
    expect(retrying.job.extensions.eta).toBe(new Date(T0 + 510).toISOString());
    const completed: any = events[5];
    expect(completed).toMatchObject({ type: 'job_state_change', framework: 'bullmq', connectionId: CONNECTION, timestamp: new Date(T0 + 600).toISOString() });
    expect(completed.job).toMatchObject({ externalId: 'mail:7', name: 'send', queue: 'mail', maxRetries: 2, workerId: 'w1@host' });
    expect(completed.job.startedAt).toBe(new Date(T0 + 512).toISOString());
    expect(completed.job.completedAt).toBe(new Date(T0 + 600).toISOString());
    expect(completed.job.createdAt).toBe(new Date(T0).toISOString());
    expect(completed.job.extensions.bullmqState).toBe('completed');
    expect(completed.job.extensions.eta).toBeUndefined(); // a backoff is not a schedule the job keeps
  });

  test('the same job id in two queues are two jobs', () => {
    const n = normalizer();
    const a: any = n.normalizeEntries('a', [entry(T0, { event: 'added', jobId: '1', name: 'x' })])[0];
    const b: any = n.normalizeEntries('b', [entry(T0, { event: 'added', jobId: '1', name: 'y' })])[0];
    expect([a.job.externalId, b.job.externalId]).toEqual(['a:1', 'b:1']);
    expect([a.job.name, b.job.name]).toEqual(['x', 'y']);
  });

  test('a delayed job is scheduled with its time; removed while pending is cancelled; removed after finishing is no event', () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('q', '2'), factsFromHash(hash({ name: 'later', delay: '60000', timestamp: String(T0) }))]]);
    const events: any[] = n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '2', name: 'later' }), entry(T0, { event: 'delayed', jobId: '2', delay: String(T0 + 60000) })], fresh);
    // "added" and "delayed" come from one script: one event says both, with the time and the name
    expect(events.map((event) => event.job.state)).toEqual(['scheduled']);
    expect(events[0].job).toMatchObject({ name: 'later', attempt: 1, createdAt: new Date(T0).toISOString() });
    expect(events[0].job.extensions.eta).toBe(new Date(T0 + 60000).toISOString());
    // split across two reads, each entry is an event: the second adds the time
    const m = normalizer();
    const split: any[] = [...m.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '2', name: 'later' })], fresh), ...m.normalizeEntries('q', [entry(T0, { event: 'delayed', jobId: '2', delay: String(T0 + 60000) })])];
    expect(split.map((event) => [event.job.state, event.job.extensions.eta ?? null])).toEqual([['scheduled', null], ['scheduled', new Date(T0 + 60000).toISOString()]]);
    const started: any = n.normalizeEntries('q', [entry(T0 + 60001, { event: 'active', jobId: '2' })])[0];
    expect(started.job.extensions.eta).toBe(new Date(T0 + 60000).toISOString()); // jobwatch keeps showing when it was scheduled for
    const removed: any[] = n.normalizeEntries('q', [entry(T0 + 5, { event: 'removed', jobId: '2', prev: 'waiting' }), entry(T0 + 6, { event: 'removed', jobId: '3', prev: 'completed' })]);
    expect(removed.map((event) => [event.job.externalId, event.job.state])).toEqual([['q:2', 'cancelled']]);
    expect(removed[0].job.completedAt).toBe(new Date(T0 + 5).toISOString());
  });

  test('a stalled job goes back to queued with the stall in extensions, not retrying; its rerun keeps the attempt', () => {
    const n = normalizer();
    n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '5', name: 'long' }), entry(T0 + 1, { event: 'active', jobId: '5' })]);
    const stall: any[] = n.normalizeEntries('q', [entry(T0 + 100, { event: 'waiting', jobId: '5', prev: 'active' }), entry(T0 + 100, { event: 'stalled', jobId: '5' })]);
    expect(stall.map((event) => event.job.state)).toEqual(['queued']);
    expect(stall[0].job.extensions).toMatchObject({ stalled: true, stalledAt: new Date(T0 + 100).toISOString() });
    const rerun: any = n.normalizeEntries('q', [entry(T0 + 200, { event: 'active', jobId: '5' })])[0];
    expect(rerun.job.attempt).toBe(1);
    // the stall check's two entries may fall in different milliseconds on a busy Redis
    const later: any[] = n.normalizeEntries('q', [entry(T0 + 300, { event: 'waiting', jobId: '5', prev: 'active' }), entry(T0 + 301, { event: 'stalled', jobId: '5' })]);
    expect(later.map((event) => event.job.state)).toEqual(['queued']);
    // a move back to waiting with no stall entry after it for the job is a retry
    const retry: any[] = n.normalizeEntries('q', [entry(T0 + 400, { event: 'active', jobId: '5' }), entry(T0 + 500, { event: 'waiting', jobId: '5', prev: 'active' }), entry(T0 + 500, { event: 'stalled', jobId: '6' })]);
    expect(retry.map((event) => event.job.state)).toEqual(['active', 'retrying', 'queued']);
  });

  test('a job whose hash is read after it ran and backed off: added is its first attempt, queued, not scheduled', () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('q', '7'), factsFromHash(hash({ name: 'flaky', delay: '2000', atm: '1', attempts: '3', timestamp: String(T0) }))]]);
    const events: any[] = n.normalizeEntries('q', [entry(T0, { event: 'added', jobId: '7', name: 'flaky' }), entry(T0 + 1, { event: 'active', jobId: '7' })], fresh);
    expect(events.map((event) => [event.job.state, event.job.attempt])).toEqual([['queued', 1], ['active', 1]]);
  });

  test('progress: a number is a percentage, turned into 0..1; any other value stays in extensions only', () => {
    const n = normalizer();
    const events: any[] = n.normalizeEntries('q', [entry(T0, { event: 'progress', jobId: '9', data: '40' }), entry(T0 + 1, { event: 'progress', jobId: '9', data: '{"step":"upload"}' })]);
    expect(events[0].job).toMatchObject({ state: 'active', progress: 0.4 });
    expect(events[1].job.progress).toBeUndefined();
    expect(events[1].job.extensions.progress).toEqual({ step: 'upload' });
    expect([progressFraction(250), progressFraction(-3), progressFraction('x')]).toEqual([1, 0, null]);
    const large: any = n.normalizeEntries('q', [entry(T0 + 2, { event: 'progress', jobId: '9', data: JSON.stringify({ log: 'x'.repeat(10_000) }) })])[0];
    expect(large.job.extensions).toMatchObject({ progressTooLarge: true });
    expect(large.job.extensions.progress).toBeUndefined();
  });

  test("a progress of 40 nested arrays is bounded: the event stays within jobwatch's 8 levels, with a mark where it was cut", () => {
    let nested: unknown = 1;
    for (let level = 0; level < 40; level++) nested = [nested];
    const [event]: any[] = normalizer().normalizeEntries('q', [entry(T0, { event: 'progress', jobId: '9', data: JSON.stringify(nested) })]);
    expect(jsonObjectProblem(event.job.extensions)).toBeNull();
    // extensions is level 1, progress level 2: six more arrays, then the mark
    let kept = event.job.extensions.progress;
    for (let level = 2; level <= 8; level++) kept = kept[0];
    expect(kept).toBe('\u2026[truncated: deeper than 8 levels]');
  });

  test("the app's names, errors and stack traces are cut to jobwatch's lengths with a visible mark", () => {
    const n = normalizer();
    const fresh = new Map([[JobFacts.key('q', '5'), factsFromHash(hash({ name: 'n'.repeat(2000), stacktrace: JSON.stringify(['s'.repeat(60_000)]) }))]]);
    const [event]: any[] = n.normalizeEntries('q', [entry(T0, { event: 'failed', jobId: '5', failedReason: 'e'.repeat(20_000), prev: 'active' })], fresh);
    expect(event.job.name).toHaveLength(1024);
    expect(event.job.error).toHaveLength(10_000);
    expect(event.job.stacktrace).toHaveLength(50_000);
    for (const field of ['name', 'error', 'stacktrace']) expect(event.job[field].endsWith('\u2026[truncated]')).toBe(true);
  });

  test('a failed job carries the failed reason from the stream; queue-level events give nothing', () => {
    const n = normalizer();
    const events: any[] = n.normalizeEntries('q', [
      entry(T0, { event: 'failed', jobId: '4', failedReason: 'out of memory', prev: 'active' }),
      entry(T0, { event: 'drained' }),
      entry(T0, { event: 'retries-exhausted', jobId: '4', attemptsMade: '3' }),
    ]);
    expect(events).toHaveLength(1);
    expect(events[0].job).toMatchObject({ state: 'failed', error: 'out of memory', name: 'unknown' });
  });

  test('a job hash that is gone reads as null; options and stack traces are parsed', () => {
    expect(factsFromHash(FACT_FIELDS.map(() => null))).toBeNull();
    const facts = factsFromHash(hash({ opts: '{"attempts":5}', stacktrace: JSON.stringify(['first', 'last']), progress: '{"a":1}', atm: '2', pb: 'w9' }))!;
    expect(facts).toMatchObject({ attempts: 5, stacktrace: 'last', progress: { a: 1 }, attemptsMade: 2, processedBy: 'w9' });
  });
});

describe('flows', () => {
  test("a flow child's parentKey becomes its parentExternalId, `<queue>:<id>` under the agent's prefix; another prefix's parent is left out", () => {
    expect(parentExternalIdOf('bull:albums:1', 'bull')).toBe('albums:1');
    expect(parentExternalIdOf('app:bull:albums:job:with:colons', 'app:bull')).toBe('albums:job:with:colons');
    expect(parentExternalIdOf('other:albums:1', 'bull')).toBeUndefined();
    expect(parentExternalIdOf('bull:albums:', 'bull')).toBeUndefined();
    expect(parentExternalIdOf(undefined, 'bull')).toBeUndefined();
    const n = new Normalizer(CONNECTION, new JobFacts(), () => undefined, 'bull');
    const fresh = new Map([[JobFacts.key('tracks', '2'), factsFromHash(hash({ name: 'render-track', parentKey: 'bull:albums:1' }))]]);
    const [added]: any[] = n.normalizeEntries('tracks', [entry(T0, { event: 'added', jobId: '2', name: 'render-track' })], fresh);
    expect(added.job.parentExternalId).toBe('albums:1');
    expect(added.job.extensions.parentKey).toBe('bull:albums:1');
  });
});
