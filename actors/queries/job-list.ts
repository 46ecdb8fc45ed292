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
import { compareInOrder, type IndexEntry, type IndexPosition, type SortOrder } from '../jobs/sorted-index.ts';
import { toJobListItem, type JobListItem } from '../views/job-view.ts';
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
  pagination: { nextCursor: string | null; limit: number; total: number };
}

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

/** Builds the page in one synchronous step: the rows it reads cannot be freed meanwhile. */
export function listJobs(actors: ConnectionActor[], query: JobListQuery): JobListPage {
  const after = query.cursor === undefined ? undefined : positionOf(query);
  const matches = jobMatcher(query);
  if (query.parentId !== undefined || query.rootId !== undefined) return listRelatedJobs(actors, query, matches, after);
  // the scans filter, so a selective filter walks its index without an entry per refused job
  const scans = actors.map((actor) => withStore(actor, actor.jobs.indexes[query.sortBy].scan(query.sortOrder, after, matches ?? undefined)));
  const page = takePage(mergeScans(scans, query.sortOrder, idOf), () => true, query.limit);
  const last = page.items[page.items.length - 1];
  const nextCursor =
    page.hasMore && last !== undefined
      ? encodeCursor({ sortBy: query.sortBy, sortOrder: query.sortOrder, key: JOB_SORT_VALUE[query.sortBy](last.item.store.table, last.item.row), id: idOf(last.item) })
      : null;
  const total = actors.reduce((sum, actor) => sum + countMatching(actor, matches), 0);
  return { data: page.items.map(({ item }) => listItemOf(item)), pagination: { nextCursor, limit: query.limit, total } };
}

function listItemOf(item: StoreRow): JobListItem {
  const job = item.store.read(item.row);
  return toJobListItem(job, item.actor.commandOutcomes.ofJob(job.id), relationsOf(item.store, item.row));
}

/**
 * A page of a parent's children or a workflow's jobs: they live in the connection of the
 * job named, at most WORKFLOW_NODES_MAX of them (the workflow route's bound), so they are
 * filtered and sorted in memory, with the same order, cursor and total as any list.
 */
function listRelatedJobs(actors: ConnectionActor[], query: JobListQuery, matches: ReturnType<typeof jobMatcher>, after: IndexPosition | undefined): JobListPage {
  const rows: StoreRow[] = [];
  for (const actor of actors) {
    const store = actor.jobs;
    for (const row of relatedRows(store, query)) if (store.rowMatches(row, matches)) rows.push({ actor, store, row });
  }
  const valueOf = JOB_SORT_VALUE[query.sortBy];
  const keyed = rows.map((item) => ({ item, key: valueOf(item.store.table, item.row), id: idOf(item) }));
  keyed.sort((a, b) => compareInOrder(query.sortOrder, a.key, a.id, b.key, b.id));
  const start = after === undefined ? 0 : keyed.findIndex((entry) => compareInOrder(query.sortOrder, entry.key, entry.id, after.key, after.id) > 0);
  const from = start < 0 ? keyed.length : start;
  const page = keyed.slice(from, from + query.limit);
  const last = page[page.length - 1];
  const hasMore = from + query.limit < keyed.length;
  const nextCursor = hasMore && last !== undefined ? encodeCursor({ sortBy: query.sortBy, sortOrder: query.sortOrder, key: last.key, id: last.id }) : null;
  return { data: page.map(({ item }) => listItemOf(item)), pagination: { nextCursor, limit: query.limit, total: rows.length } };
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
