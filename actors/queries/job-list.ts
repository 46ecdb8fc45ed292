/**
 * GET /api/jobs over the connections a user may read: each connection's sorted index is
 * scanned from the cursor position, the scans are merged by (key, id), and the page is
 * taken lazily, so a page costs about O(log n + scanned entries), not a sort of all jobs.
 * The cursor is a position (key, id), not an offset, so jobs arriving between pages
 * neither repeat an item nor skip one that existed before the first page.
 */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { JobStore } from '../connection/job-store.ts';
import { childRowsOf, relationsOf, rootRowOf } from '../connection/job-links.ts';
import { workflowOf } from './workflow.ts';
import { isSortValueOf, JOB_SORT_VALUE, type JobSortKey } from '../connection/job-sort-keys.ts';
import { validationError } from '../domain-error.ts';
import { CursorError, decodeCursor, encodeCursor } from '../jobs/cursor.ts';
import { mergeScans, takePage } from '../jobs/merge-scans.ts';
import type { IndexEntry, IndexPosition, SortOrder, SortValue } from '../jobs/sorted-index.ts';
import { compareInOrder } from '../jobs/sort-values.ts';
import { toJobListItem, type JobListItem } from '../views/job-view.ts';
import { ScanBudget, StoreSearch, type PayloadQuery } from './payload-search.ts';
import { countMatching, jobMatcher, type JobFilters } from './job-filter.ts';

export interface JobListQuery extends JobFilters {
  /** only the children of this job (job-links.ts) */
  parentId?: string;
  /** only the jobs of the workflow this job starts, itself included */
  rootId?: string;
  cursor?: string;
  limit: number;
  sortBy: JobSortKey;
  sortOrder: SortOrder;
}

export interface JobListPage {
  data: JobListItem[];
  pagination: { nextCursor: string | null; limit: number; total: number; scan?: PayloadScan };
  /**
   * Asked for by a shard's front merging pages of several shards: the cursor after each item
   * (its position), in the order of `data`.
   */
  itemCursors?: string[];
}

/** How a search by what jobs were called with went (present only for one). */
export interface PayloadScan {
  /** the budget ran out before the page was full: `nextCursor` goes on from the row it reached */
  partial: boolean;
  /** rows looked at in the listing order */
  examined: number;
  /** whether `total` counted every match; else it is an upper bound (the jobs whose arguments hold the pieces searched for, or that the other filters keep) */
  totalExact: boolean;
}

export interface JobListOptions {
  /** how long a search by payload may take, in ms */
  scanBudgetMs?: number;
  /** the clock of the budget (tests) */
  now?: () => number;
  /** up to this many candidates a page is sorted from them instead of walking an index (tests set 0 to walk) */
  sortedCandidatesMax?: number;
  /** the cursor after each item too (JobListPage.itemCursors) */
  itemCursors?: boolean;
}

/** A search by payload answers within this, or returns what it found with a cursor to go on. */
export const PAYLOAD_SCAN_BUDGET_MS = 120;
/** Up to this many candidates a page is sorted from them (each parsed: a few ms for all); more, and the index is walked, which parses only those it meets. */
const SORTED_CANDIDATES_MAX = 1_000;

/** A row of one connection's store: the scans of several connections merge into these. */
interface StoreRow {
  actor: ConnectionActor;
  store: JobStore;
  row: number;
}

const idOf = (item: StoreRow): string => item.store.table.id(item.row);

/** A store's scan with each row paired with its store; the scans filter first, so this sees about a page of entries. */
function* withStore(actor: ConnectionActor, scan: IterableIterator<IndexEntry<number>>): Generator<IndexEntry<StoreRow>, void, undefined> {
  const store = actor.jobs;
  for (const entry of scan) yield { key: entry.key, item: { actor, store, row: entry.item } };
}

/** Builds the page in one synchronous step: the rows it reads cannot be freed meanwhile. `itemCursors`: see JobListPage. */
export function listJobs(actors: ConnectionActor[], query: JobListQuery, payload: PayloadQuery | null = null, options: JobListOptions = {}): JobListPage {
  // a workflow's jobs are few (at most WORKFLOW_NODES_MAX): they are listed from the relation index, not an index walk
  if (query.parentId !== undefined || query.rootId !== undefined) return listRelatedJobs(actors, query, payload, options);
  if (payload !== null) return searchJobs(actors, query, payload, options);
  const after = query.cursor === undefined ? undefined : positionOf(query);
  const matches = jobMatcher(query);
  // the scans filter, so a selective filter walks its index without an entry per refused job
  const scans = actors.map((actor) => withStore(actor, actor.jobs.indexes[query.sortBy].scan(query.sortOrder, after, matches ?? undefined)));
  const page = takePage(mergeScans(scans, query.sortOrder, idOf), () => true, query.limit);
  const cursorAfter = (item: StoreRow): string => cursorAfterRow(query, item);
  const last = page.items[page.items.length - 1];
  const nextCursor = page.hasMore && last !== undefined ? cursorAfter(last.item) : null;
  const total = actors.reduce((sum, actor) => sum + countMatching(actor, matches), 0);
  return withItemCursors({ data: page.items.map(({ item }) => listItemOf(item.actor, item.row)), pagination: { nextCursor, limit: query.limit, total } }, page.items.map(({ item }) => cursorAfter(item)), options);
}

/** The page with the cursor after each item when a front merging shards' pages asked for them. */
function withItemCursors(listed: JobListPage, cursors: string[], options: JobListOptions): JobListPage {
  if (options.itemCursors === true) listed.itemCursors = cursors;
  return listed;
}

/** A row's job as a list shows it, with its latest command. */
function listItemOf(actor: ConnectionActor, row: number): JobListItem {
  const job = actor.jobs.readListed(row);
  return toJobListItem(job, actor.commandOutcomes.ofJob(job.id), relationsOf(actor.jobs, row));
}

/**
 * A list filtered by what the jobs were called with as well (payload-search.ts): the same
 * walk of the indexes, each row also tested against the payload terms, within a time
 * budget; a walk stopped by the budget ends the page at the row it reached.
 */
function searchJobs(actors: ConnectionActor[], query: JobListQuery, payload: PayloadQuery, options: JobListOptions): JobListPage {
  const after = query.cursor === undefined ? undefined : positionOf(query);
  const matches = jobMatcher(query);
  const budget = new ScanBudget(options.scanBudgetMs ?? PAYLOAD_SCAN_BUDGET_MS, options.now);
  const searches = actors.map((actor) => new StoreSearch(actor, payload, budget));
  const marked = searches.map((search) => search.markCandidates());
  if (marked.every((complete) => complete)) {
    const few = fewCandidates(searches, matches, options.sortedCandidatesMax ?? SORTED_CANDIDATES_MAX);
    if (few !== null) return sortedPage(few, query, after, options);
  }
  const searchOf = new Map(searches.map((search) => [search.store, search]));
  const scans = searches.map((search) => withStore(search.actor, search.store.indexes[query.sortBy].scan(query.sortOrder, after, matches ?? undefined, search.rowTest)));
  const items: IndexEntry<StoreRow>[] = [];
  let hasMore = false;
  let stoppedAt: IndexEntry<StoreRow> | null = null;
  for (const entry of mergeScans(scans, query.sortOrder, idOf)) {
    const search = searchOf.get(entry.item.store)!;
    const stops = search.stoppedAt.has(entry.item.row);
    if (stops && !search.matched.has(entry.item.row)) {
      stoppedAt = entry;
      break;
    }
    if (items.length === query.limit) {
      hasMore = true;
      break;
    }
    items.push(entry);
    if (stops) {
      stoppedAt = entry;
      break;
    }
  }
  const last = stoppedAt ?? (hasMore ? items[items.length - 1] : undefined);
  const nextCursor = last !== undefined ? cursorAfterRow(query, last.item) : null;
  const { total, totalExact } = payloadTotal(actors, searches, marked, matches, payload);
  const listed: JobListPage = {
    data: items.map(({ item }) => listItemOf(item.actor, item.row)),
    pagination: { nextCursor, limit: query.limit, total, scan: { partial: stoppedAt !== null, examined: budget.examined, totalExact } },
  };
  return withItemCursors(listed, items.map(({ item }) => cursorAfterRow(query, item)), options);
}

/** A job whose arguments hold what was searched for, as the sorted page orders it. */
interface Candidate {
  search: StoreSearch;
  row: number;
}

/**
 * The marked jobs the other filters keep, when they are few (at most SORTED_CANDIDATES_MAX):
 * then sorting them is cheaper than walking an index past every job that is not one.
 */
function fewCandidates(searches: StoreSearch[], matches: ReturnType<typeof jobMatcher>, most: number): Candidate[] | null {
  const candidates: Candidate[] = [];
  for (const search of searches) {
    for (const row of search.markedRows()) {
      if (matches !== null && !search.store.rowHasFields(row, matches)) continue;
      if (candidates.length >= most) return null;
      candidates.push({ search, row });
    }
  }
  return candidates;
}

/** The page of few candidates: each tested whole, the matches sorted in the listing order, the ones after the cursor's position. Every match is counted. */
function sortedPage(candidates: Candidate[], query: JobListQuery, after: IndexPosition | undefined, options: JobListOptions): JobListPage {
  const valueOf = JOB_SORT_VALUE[query.sortBy];
  const found = candidates
    .filter(({ search, row }) => search.matches(row))
    .map(({ search, row }) => ({ actor: search.actor, row, key: valueOf(search.store.table, row), id: search.store.table.id(row) }));
  found.sort((a, b) => compareInOrder(query.sortOrder, a.key, a.id, b.key, b.id));
  const rest = after === undefined ? found : found.filter((job) => compareInOrder(query.sortOrder, job.key, job.id, after.key, after.id) > 0);
  const page = rest.slice(0, query.limit);
  const last = page[page.length - 1];
  const nextCursor = rest.length > query.limit && last !== undefined ? cursorAt(query, last) : null;
  const listed: JobListPage = {
    data: page.map((job) => listItemOf(job.actor, job.row)),
    pagination: { nextCursor, limit: query.limit, total: found.length, scan: { partial: false, examined: candidates.length, totalExact: true } },
  };
  return withItemCursors(listed, page.map((job) => cursorAt(query, job)), options);
}

/**
 * What a walked search can say of its total: the jobs marked that the other filters keep.
 * They are exactly the matches of an `args` search; for a field term, where the texts hold
 * the value as that key's but not every one at the path asked for, an upper bound (a walk
 * means more candidates than a page sorted from them checks one by one). When the scan of
 * the texts ran out of budget, the jobs the other filters keep: an upper bound too.
 */
function payloadTotal(actors: ConnectionActor[], searches: StoreSearch[], marked: boolean[], matches: ReturnType<typeof jobMatcher>, payload: PayloadQuery): { total: number; totalExact: boolean } {
  if (marked.some((complete) => !complete)) return { total: actors.reduce((sum, actor) => sum + countMatching(actor, matches), 0), totalExact: false };
  let candidates = 0;
  for (const search of searches) {
    for (const row of search.markedRows()) if (matches === null || search.store.rowHasFields(row, matches)) candidates++;
  }
  return { total: candidates, totalExact: payload.fields.length === 0 };
}

/**
 * A page of a parent's children or a workflow's jobs: they live in the connection of the
 * job named, at most WORKFLOW_NODES_MAX of them (the workflow route's bound), so they are
 * filtered and sorted in memory, with the same order, cursor and total as any list.
 */
function listRelatedJobs(actors: ConnectionActor[], query: JobListQuery, payload: PayloadQuery | null, options: JobListOptions): JobListPage {
  const after = query.cursor === undefined ? undefined : positionOf(query);
  const matches = jobMatcher(query);
  const budget = new ScanBudget(options.scanBudgetMs ?? PAYLOAD_SCAN_BUDGET_MS, options.now);
  const rows: StoreRow[] = [];
  for (const actor of actors) {
    const store = actor.jobs;
    // a search by payload tests each of these few rows' own texts
    const search = payload === null ? null : new StoreSearch(actor, payload, budget);
    for (const row of relatedRows(store, query)) if (store.rowMatches(row, matches) && (search === null || search.matches(row))) rows.push({ actor, store, row });
  }
  const valueOf = JOB_SORT_VALUE[query.sortBy];
  const keyed = rows.map((item) => ({ item, key: valueOf(item.store.table, item.row), id: idOf(item) }));
  keyed.sort((a, b) => compareInOrder(query.sortOrder, a.key, a.id, b.key, b.id));
  const start = after === undefined ? 0 : keyed.findIndex((entry) => compareInOrder(query.sortOrder, entry.key, entry.id, after.key, after.id) > 0);
  const from = start < 0 ? keyed.length : start;
  const page = keyed.slice(from, from + query.limit);
  const last = page[page.length - 1];
  const hasMore = from + query.limit < keyed.length;
  const nextCursor = hasMore && last !== undefined ? cursorAt(query, last) : null;
  const listed: JobListPage = { data: page.map(({ item }) => listItemOf(item.actor, item.row)), pagination: { nextCursor, limit: query.limit, total: rows.length } };
  return withItemCursors(listed, page.map((entry) => cursorAt(query, entry)), options);
}

/** The rows a parentId or rootId filter names in one store (both: the rows both name). */
function relatedRows(store: JobStore, query: JobListQuery): number[] {
  let rows: number[] | null = null;
  if (query.rootId !== undefined) {
    const root = store.rowOf(query.rootId);
    // a job whose own root is another is no workflow's root: the list is empty
    rows = root < 0 || rootRowOf(store, root) !== root ? [] : workflowOf(store, root, 0).nodes.map((node) => store.rowOf(node.id));
  }
  if (query.parentId !== undefined) {
    const parent = store.rowOf(query.parentId);
    const children = parent < 0 ? [] : [...childRowsOf(store, parent)].filter((child) => child !== parent);
    rows = rows === null ? children : rows.filter((row) => children.includes(row));
  }
  return rows ?? [];
}

/** The cursor that resumes after a row. */
function cursorAfterRow(query: JobListQuery, item: StoreRow): string {
  return cursorAt(query, { key: JOB_SORT_VALUE[query.sortBy](item.store.table, item.row), id: idOf(item) });
}

/** The cursor that resumes after a job of this sort key and id, in the query's order. */
function cursorAt(query: JobListQuery, job: { key: SortValue; id: string }): string {
  return encodeCursor({ sortBy: query.sortBy, sortOrder: query.sortOrder, key: job.key, id: job.id });
}

function positionOf(query: JobListQuery): IndexPosition {
  let position: IndexPosition;
  try {
    position = decodeCursor(query.cursor!, query.sortBy, query.sortOrder);
  } catch (error) {
    if (error instanceof CursorError) throw validationError('cursor', error.message);
    throw error;
  }
  // A well-formed cursor with a key of the wrong type (forged, or from another version) would resume at a meaningless place.
  if (!isSortValueOf(query.sortBy, position.key)) throw validationError('cursor', 'cursor is malformed');
  return position;
}
