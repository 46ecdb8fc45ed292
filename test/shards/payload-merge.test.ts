/**
 * A payload search over connections on several shards, each shard's scan stopped by its
 * budget (spent at once: a stop every 256 rows): the front's merged pages, followed by their
 * cursors, are exactly the matches one engine lists without any budget, in the listing
 * order; a merged page whose shard stopped says partial, and no page lists a match after the
 * row a stopped shard reached. test/shards/identical-reads.test.ts compares whole answers
 * where no budget is reached.
 */
import { describe, expect, test } from 'bun:test';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { listJobs, type JobListOptions, type JobListPage, type JobListQuery } from '../../actors/queries/job-list.ts';
import { payloadQueryOf, type PayloadQuery } from '../../actors/queries/payload-search.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { mergeCursorPages } from '../../src/shards/shard-merge.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const limits = { dailyEventLimit: 0, dedupKeysMax: 1000, maxJobsPerConnection: 1_000_000, retentionMs: 86_400_000, dailyIngestBytesMax: 0, connectionMemoryBytesMax: 0 };

/** A connection with `count` jobs, about one in 40 of them with `userId` 7, at whole seconds so ties between connections are broken by id. */
function connection(index: number, count: number, random: SeededRandom): ConnectionActor {
  const id = `0190a000-0000-7000-8000-00000000000${index}`;
  const actor = new ConnectionActor(id, { ...limits, payload: { argsBytesMax: 64 * 1024 } });
  const events = Array.from({ length: count }, (_, i) =>
    jobEvent(id, T0 - 1_000 * random.int(3_600), {
      externalId: `job-${i}`,
      name: `tasks.t${random.int(3)}`,
      state: (['queued', 'active', 'completed', 'failed'] as const)[random.int(4)],
      args: { userId: random.int(40), plan: random.next() < 0.5 ? 'pro' : 'free' },
    }),
  );
  for (let start = 0; start < events.length; start += 1000) actor.evolve(actor.decideIngest(events.slice(start, start + 1000), T0).record!);
  return actor;
}

const random = new SeededRandom(Number(process.env.SHARDS_SEED ?? 20261127));
const actors = [0, 1, 2, 3].map((index) => connection(index, 1200, random));
/** shard 0 keeps two connections, as a shard of several connections answers one budget for both */
const shards = [[actors[0]!, actors[1]!], [actors[2]!], [actors[3]!]];
const context = { connectionOrder: actors.map((actor) => actor.connectionId), connectionListOrder: actors.map((actor) => actor.connectionId) };

/** One merged page, from each shard's page as its answer's JSON carries it. */
function mergedPage(query: JobListQuery, payload: PayloadQuery, options: JobListOptions): JobListPage {
  const bodies = shards.map((mine) => JSON.parse(JSON.stringify(listJobs(mine, query, payload, { ...options, itemCursors: true }))));
  return mergeCursorPages(bodies, context) as JobListPage;
}

function walk(page: (cursor: string | undefined) => JobListPage) {
  const ids: string[] = [];
  const pages: JobListPage[] = [];
  let cursor: string | undefined;
  for (let count = 0; count < 10_000; count++) {
    const answer = page(cursor);
    pages.push(answer);
    ids.push(...answer.data.map((item) => item.id));
    if (answer.pagination.nextCursor === null) return { ids, pages };
    cursor = answer.pagination.nextCursor;
  }
  throw new Error('the pages never ended');
}

describe('payload search merged over shards whose scans ran out of budget', () => {
  for (const params of [{ 'data.userId': '7' }, { args: '"userId":7,', 'data.plan': 'pro' }]) {
    for (const [sortBy, sortOrder] of [['createdAt', 'desc'], ['name', 'asc']] as const) {
      test(`${JSON.stringify(params)} by ${sortBy} ${sortOrder}: the merged walk is exactly one engine's matches in order`, () => {
        const payload = payloadQueryOf(params)!;
        const query = { sortBy, sortOrder, limit: 20 };
        const at = (cursor: string | undefined) => (cursor === undefined ? query : { ...query, cursor });
        const one = walk((cursor) => listJobs(actors, at(cursor), payload, { scanBudgetMs: 600_000 }));
        const merged = walk((cursor) => mergedPage(at(cursor), payload, { scanBudgetMs: 0, sortedCandidatesMax: 0 }));
        expect(one.ids.length).toBeGreaterThan(40);
        expect(merged.ids).toEqual(one.ids);
        expect(merged.pages.some((page) => page.pagination.scan!.partial)).toBe(true);
        // a page cut short by a stopped shard says so; a full one need not
        for (const page of merged.pages) if (page.data.length < query.limit && page.pagination.nextCursor !== null) expect(page.pagination.scan!.partial).toBe(true);
        expect(merged.pages.at(-1)!.pagination.scan!.partial).toBe(false);
      });
    }
  }

  test('within the budget, the merged page is one engine\'s page: the same items, cursor, total and scan', () => {
    const payload = payloadQueryOf({ 'data.userId': '7' })!;
    const query = { sortBy: 'createdAt' as const, sortOrder: 'desc' as const, limit: 20 };
    const one = listJobs(actors, query, payload, { scanBudgetMs: 600_000 });
    const merged = mergedPage(query, payload, { scanBudgetMs: 600_000 });
    expect(merged).toEqual(JSON.parse(JSON.stringify(one)));
  });
});
