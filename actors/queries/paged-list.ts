/**
 * Page-based listing (queues, workers): these collections are small (hundreds), so
 * sorting the views per request is cheaper than maintaining indexes. Nulls sort last in
 * both orders and ties break by id, as in the job lists.
 */
import { compareInOrder, type SortOrder, type SortValue } from '../jobs/sorted-index.ts';

export interface PageQuery {
  page: number;
  limit: number;
  sortOrder: SortOrder;
  /**
   * A shard's front merging the lists of several shards asks each for every item up to the
   * page's end (not only the page) with their sort keys: the page of the merged list is
   * among them.
   */
  throughPage?: boolean;
}

export interface PagedResult<T> {
  data: T[];
  pagination: { page: number; limit: number; total: number; totalPages: number };
  /** With `throughPage`: the order and each item's sort key, in the order of `data` (ties break by the item's `id`). */
  itemKeys?: { sortOrder: SortOrder; keys: SortValue[] };
}

export function pageOf<T extends { id: string }>(items: T[], sortValue: (item: T) => SortValue, query: PageQuery): PagedResult<T> {
  return pageThenPresent(items, sortValue, query, (item) => item);
}

/**
 * Sorts by a cheap key and builds the (costly) response shape only for the items on the
 * page: a queue's health bar is ~100 buckets, and a page needs at most 100 of them.
 */
export function pageThenPresent<T extends { id: string }, V>(
  items: T[],
  sortValue: (item: T) => SortValue,
  query: PageQuery,
  present: (item: T) => V,
): PagedResult<V> {
  const keyed = items.map((item) => ({ item, key: sortValue(item) }));
  keyed.sort((a, b) => compareInOrder(query.sortOrder, a.key, a.item.id, b.key, b.item.id));
  const end = query.page * query.limit;
  const shown = keyed.slice(query.throughPage === true ? 0 : end - query.limit, end);
  const result: PagedResult<V> = {
    data: shown.map((entry) => present(entry.item)),
    pagination: { page: query.page, limit: query.limit, total: items.length, totalPages: Math.ceil(items.length / query.limit) },
  };
  if (query.throughPage === true) result.itemKeys = { sortOrder: query.sortOrder, keys: shown.map((entry) => entry.key) };
  return result;
}
