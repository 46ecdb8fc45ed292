/**
 * Search by what jobs were called with, against a reference that parses every job's
 * arguments: every page of a search, followed by its cursors, is exactly the matching jobs
 * in the listing order, with or without other filters, in every sort, whether the scan
 * finished within its budget or stopped and went on from its cursor.
 */
import { describe, expect, test } from 'bun:test';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { listJobs, type JobListOptions, type JobListQuery } from '../../actors/queries/job-list.ts';
import { fieldMatches, needlesOf, payloadQueryOf, type PayloadQuery } from '../../actors/queries/payload-search.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const CONNECTION = '0190a000-0000-7000-8000-0000000000aa';
const limits = { dailyEventLimit: 0, dedupKeysMax: 1000, maxJobsPerConnection: 1_000_000, retentionMs: 86_400_000, dailyIngestBytesMax: 0, connectionMemoryBytesMax: 0 };

/** `count` jobs with varied arguments (some none, some cut, some with a long pad so the texts span several search windows). */
function seeded(seed: number, count: number, padBytes = 0): ConnectionActor {
  const random = new SeededRandom(seed);
  const actor = new ConnectionActor(CONNECTION, { ...limits, payload: { argsBytesMax: 64 * 1024 } });
  const events: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const kind = random.int(10);
    const args =
      kind === 0
        ? null
        : kind === 1
          ? { kwargs: { invoice_id: `INV-${random.int(20)}`, note: 'pad'.repeat(30_000) } } // past 64 KiB: kept cut
          : kind < 5
            ? { args: [random.int(5), 'x'], kwargs: { invoice_id: `INV-${random.int(20)}`, to: `user${random.int(7)}@example.com` } }
            : { userId: random.int(30), plan: random.next() < 0.5 ? 'pro' : 'free', tags: ['a', random.int(3)], pad: 'p'.repeat(padBytes) };
    events.push(
      jobEvent(CONNECTION, T0 - 3_600_000 + random.int(3_600_000), {
        externalId: `job-${i}`,
        name: `tasks.t${random.int(3)}`,
        state: (['queued', 'active', 'completed', 'failed'] as const)[random.int(4)],
        queue: random.next() < 0.5 ? 'mail' : 'media',
        ...(args === null ? {} : { args }),
      }),
    );
  }
  for (let start = 0; start < events.length; start += 1000) actor.evolve(actor.decideIngest(events.slice(start, start + 1000), T0).record!);
  return actor;
}

/** Which jobs match, by parsing every job's arguments: the reference. */
function reference(actor: ConnectionActor, payload: PayloadQuery): Set<string> {
  const ids = new Set<string>();
  for (const job of actor.jobs.values()) {
    if (job.args === null) continue;
    if (payload.contains !== undefined && !job.args.includes(payload.contains)) continue;
    if (payload.fields.length > 0) {
      if (job.args.startsWith('\u0001')) continue;
      const args: unknown = JSON.parse(job.args);
      if (!payload.fields.every((term) => fieldMatches(args, term))) continue;
    }
    ids.add(job.id);
  }
  return ids;
}

/** Every page of a search, following its cursors; the ids in order, and whether any page was partial. */
function allPages(actor: ConnectionActor, query: Omit<JobListQuery, 'limit' | 'cursor'>, payload: PayloadQuery, options: JobListOptions = {}) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let partial = false;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = listJobs([actor], { ...query, limit: 20, ...(cursor === undefined ? {} : { cursor }) }, payload, options);
    ids.push(...page.data.map((item) => item.id));
    partial ||= page.pagination.scan!.partial;
    if (page.pagination.nextCursor === null) return { ids, partial, first: listJobs([actor], { ...query, limit: 20 }, payload, options) };
    cursor = page.pagination.nextCursor;
  }
  throw new Error('the pages never ended');
}

/** The same listing without the payload terms, filtered by the reference: the expected order. */
function expectedOrder(actor: ConnectionActor, query: Omit<JobListQuery, 'limit' | 'cursor'>, matching: Set<string>): string[] {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = listJobs([actor], { ...query, limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    ids.push(...page.data.map((item) => item.id).filter((id) => matching.has(id)));
    if (page.pagination.nextCursor === null) return ids;
    cursor = page.pagination.nextCursor;
  }
}

const searches: Array<Record<string, string>> = [
  { args: 'INV-7"' },
  { 'data.userId': '12' },
  { 'kwargs.invoice_id': 'INV-3' },
  { 'data.plan': 'pro', 'data.tags.1': '2' },
  { args: 'example.com', 'kwargs.to': 'user3@example.com' },
  { args: 'pad' },
  { 'data.nothing.here': 'x' },
];

describe('search by what jobs were called with', () => {
  const actor = seeded(1, 1500);

  for (const params of searches) {
    test(`${JSON.stringify(params)}: every page, in every sort, with and without a state filter, is exactly the matches in order`, () => {
      const payload = payloadQueryOf(params)!;
      const matching = reference(actor, payload);
      JOB_SORT_KEYS.forEach((sortBy, index) => {
        // every sort, each order and with and without another filter in turn
        const sortOrder = index % 2 === 0 ? 'asc' : 'desc';
        const query = { sortBy, sortOrder, ...(index % 3 === 0 ? { state: 'failed' as const } : index % 3 === 1 ? { queue: 'mail' } : {}) } as const;
        // both ways to a page: sorted from few candidates, and a walk of the index (as with many); a budget no loaded machine reaches
        for (const sortedCandidatesMax of [undefined, 0]) {
          const { ids, partial, first } = allPages(actor, query, payload, { scanBudgetMs: 600_000, ...(sortedCandidatesMax === undefined ? {} : { sortedCandidatesMax }) });
          expect(partial).toBe(false);
          expect(ids).toEqual(expectedOrder(actor, query, matching));
          // a page sorted from few candidates counts every match; a walk counts the candidates, exact for `args`, an upper bound for a field
          if (sortedCandidatesMax === undefined || payload.fields.length === 0) expect(first.pagination.scan!.totalExact).toBe(true);
          if (first.pagination.scan!.totalExact) expect(first.pagination.total).toBe(ids.length);
          else expect(first.pagination.total).toBeGreaterThanOrEqual(ids.length);
        }
      });
    });
  }

  test('a budget spent at once: the scan stops every 256 rows, says so, and its cursors still give exactly the matches, in order', () => {
    // about one job in 120: a page of 20 needs more than 256 rows
    const payload = payloadQueryOf({ 'data.plan': 'pro', 'data.userId': '12' })!;
    const query = { sortBy: 'createdAt' as const, sortOrder: 'desc' as const };
    const { ids, partial, first } = allPages(actor, query, payload, { scanBudgetMs: 0, sortedCandidatesMax: 0 });
    expect(ids.length).toBeGreaterThan(3);
    expect(partial).toBe(true);
    // each state's part of the createdAt order reaches its next check before the page can end: at most 256 rows more each
    expect(first.pagination.scan!.partial).toBe(true);
    expect(first.pagination.scan!.examined).toBeLessThanOrEqual(256 * 4);
    expect(ids).toEqual(expectedOrder(actor, query, reference(actor, payload)));
  });

  test('texts in more than one segment, scanned past the budget: each row is tested on its own, and the result is the same', () => {
    const wide = seeded(2, 300, 80_000); // ~12 MB of argument texts: two segments, a check of the budget between them
    let ticks = 0;
    const now = () => (ticks += 1); // the budget of 1 tick is spent by the first window
    for (const params of [{ 'data.plan': 'free' }, { args: '"userId":2,' }]) {
      const payload = payloadQueryOf(params)!;
      const query = { sortBy: 'startedAt' as const, sortOrder: 'asc' as const };
      const { ids, first } = allPages(wide, query, payload, { scanBudgetMs: 1, now });
      expect(ids).toEqual(expectedOrder(wide, query, reference(wide, payload)));
      // the scan did not finish: the total is an upper bound (the jobs the other filters keep)
      expect(first.pagination.scan!.totalExact).toBe(false);
      expect(first.pagination.total).toBe(300);
    }
  });
});

describe('the payload terms of a query', () => {
  test('args, data.<path> and kwargs.<path>; other parameters are not payload terms', () => {
    expect(payloadQueryOf({ state: 'failed', search: 'x' })).toBeNull();
    expect(payloadQueryOf({ args: 'INV', 'data.a.0.b': '1', 'kwargs.id': 'x' })).toEqual({
      contains: 'INV',
      fields: [
        { param: 'data.a.0.b', path: ['a', '0', 'b'], value: '1' },
        { param: 'kwargs.id', path: ['kwargs', 'id'], value: 'x' },
      ],
    });
  });

  for (const [params, field, message] of [
    [{ args: '' }, 'args', 'must not be empty'],
    [{ args: 'x'.repeat(501) }, 'args', 'at most 500'],
    [{ 'data.': '1' }, 'data.', 'path of 1 to 16 keys'],
    [{ 'data.a..b': '1' }, 'data.a..b', 'path of 1 to 16 keys'],
    [{ [`data.${Array.from({ length: 17 }, () => 'k').join('.')}`]: '1' }, `data.${Array.from({ length: 17 }, () => 'k').join('.')}`, 'path of 1 to 16 keys'],
    [{ 'data.a': ['1', '2'] }, 'data.a', 'given once'],
    [{ 'data.a': '1', 'data.b': '1', 'data.c': '1', 'data.d': '1', 'data.e': '1' }, 'data.e', 'at most 4'],
  ] as const) {
    test(`${JSON.stringify(params).slice(0, 60)} is refused naming ${field}`, () => {
      try {
        payloadQueryOf(params as Record<string, unknown>);
        throw new Error('not refused');
      } catch (error) {
        expect((error as { details?: Record<string, string[]> }).details?.[field]?.[0]).toContain(message);
      }
    });
  }

  test("a field term looks for the value's text, standing as the last key's value: quoted, or bare for a number, true, false or null", () => {
    const described = (path: string[], value: string) =>
      needlesOf({ param: 'p', path, value }).map((needle) => `${needle.text} ${needle.places === null ? 'anywhere' : needle.places.map((place) => `after ${place.before.join('|')} before ${place.after}`).join('; ')}`);
    expect(described(['userId'], '42')).toEqual(['42 after "userId":" before quote; after "userId": before valueEnd']);
    expect(described(['ok'], 'true')).toEqual(['true after "ok":" before quote; after "ok": before valueEnd']);
    expect(described(['name'], 'Ada')).toEqual(['Ada after "name":" before quote']);
    expect(described(['n'], '4.50')).toEqual(['4.50 after "n":" before quote', '4.5 after "n": before valueEnd']);
    expect(described(['a', '0'], 'x"y')).toEqual(['x\\"y after ["|," before quote']);
    expect(described(['empty'], '')).toEqual(['"empty":"" anywhere']);
  });

  test('a field equals a string as it is, a number by value, anything else by its JSON', () => {
    const args = { id: 42, name: 'Ada', ok: true, none: null, list: [1, { sku: 'A-1' }], nested: { deep: { v: 'x' } } };
    const matches = (path: string, value: string) => fieldMatches(args, { param: path, path: path.split('.'), value });
    expect([matches('id', '42'), matches('id', '42.0'), matches('id', '43'), matches('id', '')]).toEqual([true, true, false, false]);
    expect([matches('name', 'Ada'), matches('name', 'ada'), matches('ok', 'true'), matches('none', 'null')]).toEqual([true, false, true, true]);
    expect([matches('list.1.sku', 'A-1'), matches('list.0', '1'), matches('list.sku', 'A-1'), matches('nested.deep.v', 'x'), matches('nested.deep', '{"v":"x"}')]).toEqual([
      true,
      true,
      false,
      true,
      true,
    ]);
    expect([matches('constructor', 'x'), matches('missing', 'x')]).toEqual([false, false]);
  });
});
