/**
 * GET /api/jobs over the connections a user may read: each connection's sorted index is
 * scanned from the cursor position, the scans are merged by (key, id), and the page is
 * taken lazily, so a page costs about O(log n + scanned entries), not a sort of all jobs.
 * The cursor is a position (key, id), not an offset, so jobs arriving between pages
 * neither repeat an item nor skip one that existed before the first page.
 */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { JobStore } from '../connection/job-store.ts';
import { isSortValueOf, JOB_SORT_VALUE, type JobSortKey } from '../connection/job-sort-keys.ts';
import { validationError } from '../domain-error.ts';
import { CursorError, decodeCursor, encodeCursor } from '../jobs/cursor.ts';
import { mergeScans, takePage } from '../jobs/merge-scans.ts';
import type { IndexEntry, IndexPosition, SortOrder } from '../jobs/sorted-index.ts';
import { toJobListItem, type JobListItem } from '../views/job-view.ts';
import { countMatching, jobMatcher, type JobFilters } from './job-filter.ts';

export interface JobListQuery extends JobFilters {
  cursor?: string;
  limit: number;
  sortBy: JobSortKey;
  sortOrder: SortOrder;
}

export interface JobListPage {
  data: JobListItem[];
  pagination: { nextCursor: string | null; limit: number; total: number };
  /**
   * Asked for by a shard's front merging pages of several shards: the cursor after each item
   * (its position), in the order of `data`.
   */
  itemCursors?: string[];
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

/** Builds the page in one synchronous step: the rows it reads cannot be freed meanwhile. `itemCursors`: see JobListPage. */
export function listJobs(actors: ConnectionActor[], query: JobListQuery, { itemCursors = false }: { itemCursors?: boolean } = {}): JobListPage {
  const after = query.cursor === undefined ? undefined : positionOf(query);
  const matches = jobMatcher(query);
  // the scans filter, so a selective filter walks its index without an entry per refused job
  const scans = actors.map((actor) => withStore(actor, actor.jobs.indexes[query.sortBy].scan(query.sortOrder, after, matches ?? undefined)));
  const page = takePage(mergeScans(scans, query.sortOrder, idOf), () => true, query.limit);
  const cursorAfter = (item: StoreRow): string =>
    encodeCursor({ sortBy: query.sortBy, sortOrder: query.sortOrder, key: JOB_SORT_VALUE[query.sortBy](item.store.table, item.row), id: idOf(item) });
  const last = page.items[page.items.length - 1];
  const nextCursor = page.hasMore && last !== undefined ? cursorAfter(last.item) : null;
  const total = actors.reduce((sum, actor) => sum + countMatching(actor, matches), 0);
  const data = page.items.map(({ item }) => {
    const job = item.store.read(item.row);
    return toJobListItem(job, item.actor.commandOutcomes.ofJob(job.id));
  });
  const listed: JobListPage = { data, pagination: { nextCursor, limit: query.limit, total } };
  if (itemCursors) listed.itemCursors = page.items.map(({ item }) => cursorAfter(item));
  return listed;
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
