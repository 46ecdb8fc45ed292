/**
 * One sort order kept as one SortedIndex per group (the jobs' createdAt order, grouped by
 * state), read either whole, the groups merged by (key, id) into the order a single index
 * would give, or for some groups only. The eviction at the job cap wants the oldest
 * finished jobs: with one index it scanned from the oldest job past every unfinished one
 * (all of them when old jobs are stuck queued); here it reads the finished groups directly.
 * The entries are the same ones a single index holds, so this costs no memory beyond a few
 * partitions, but an item changing group moves between them (the caller passes the group
 * an entry was inserted with to remove it, since the item may have changed since).
 */
import { itemIds, type IdsOf, type ItemIds } from './item-ids.ts';
import { mergeScans } from './merge-scans.ts';
import { SortedIndex, type IndexEntry, type IndexPosition, type SortedIndexOptions } from './sorted-index.ts';
import type { SortOrder, SortValue } from './sort-values.ts';

export class GroupedIndex<T, G> {
  private readonly partitions = new Map<G, SortedIndex<T>>();
  private entryCount = 0;
  private readonly ids: ItemIds<T>;

  constructor(
    ids: IdsOf<T>,
    private readonly options: SortedIndexOptions = {},
  ) {
    this.ids = itemIds(ids);
  }

  get size(): number {
    return this.entryCount;
  }

  /** Groups holding at least one entry. */
  get groups(): G[] {
    return [...this.partitions.keys()];
  }

  /** The caller guarantees that (key, id of item) is in no group yet. */
  insert(group: G, key: SortValue, item: T): void {
    let partition = this.partitions.get(group);
    if (partition === undefined) {
      partition = new SortedIndex<T>(this.ids, this.options);
      this.partitions.set(group, partition);
    }
    partition.insert(key, item);
    this.entryCount++;
  }

  /** `group` and `key` are what the item was inserted with. False when no such entry exists. */
  remove(group: G, key: SortValue, item: T): boolean {
    const partition = this.partitions.get(group);
    if (partition === undefined || !partition.remove(key, item)) return false;
    this.entryCount--;
    if (partition.size === 0) this.partitions.delete(group);
    return true;
  }

  /**
   * Fills an empty index from parallel arrays in ascending (key, id) order, nulls last (see
   * ascending-order.ts): each group takes its items in the order they come, which is its own
   * ascending order.
   */
  loadAscending(keys: readonly SortValue[], items: readonly T[], groupOf: (item: T) => G): void {
    if (this.entryCount > 0) throw new Error('GroupedIndex.loadAscending needs an empty index');
    if (keys.length !== items.length) throw new Error('GroupedIndex.loadAscending needs one item per key');
    const grouped = new Map<G, { keys: SortValue[]; items: T[] }>();
    for (let index = 0; index < items.length; index++) {
      const item = items[index] as T;
      const group = groupOf(item);
      let lists = grouped.get(group);
      if (lists === undefined) grouped.set(group, (lists = { keys: [], items: [] }));
      lists.keys.push(keys[index] as SortValue);
      lists.items.push(item);
    }
    for (const [group, lists] of grouped) {
      const partition = new SortedIndex<T>(this.ids, this.options);
      partition.loadAscending(lists.keys, lists.items);
      this.partitions.set(group, partition);
      this.entryCount += lists.items.length;
    }
  }

  /** Every entry in the listing order, as one SortedIndex over all groups would list them. */
  scan(order: SortOrder, after?: IndexPosition, matches?: (item: T) => boolean): IterableIterator<IndexEntry<T>> {
    return this.scanGroups(this.partitions.keys(), order, after, matches);
  }

  /** The entries of `groups` only, in the listing order; a group without entries is skipped. */
  scanGroups(groups: Iterable<G>, order: SortOrder, after?: IndexPosition, matches?: (item: T) => boolean): IterableIterator<IndexEntry<T>> {
    const scans: IterableIterator<IndexEntry<T>>[] = [];
    for (const group of groups) {
      const partition = this.partitions.get(group);
      if (partition !== undefined) scans.push(partition.scan(order, after, matches));
    }
    return mergeScans(scans, order, this.ids.idOf);
  }

  // Stryker disable all: a check for tests, which call it on structures that are right
  /** Throws when a partition's layout is broken or the count is off; for tests, O(n). */
  checkInvariants(): void {
    let total = 0;
    for (const partition of this.partitions.values()) {
      partition.checkInvariants();
      if (partition.size === 0) throw new Error('GroupedIndex keeps an empty partition');
      total += partition.size;
    }
    if (total !== this.entryCount) throw new Error(`partitions hold ${total} entries, count says ${this.entryCount}`);
  }
  // Stryker restore all
}
