/**
 * An index for keys with few distinct values (state, queue, worker, task name): one
 * SortedIndex per key, visited in key order. Within a partition every entry has the
 * same key, so no comparison ties on the key, and since job ids are time-ordered a new
 * entry usually lands at its partition's end (one comparison and an append). A single
 * index over all keys paid a full search plus a block shift for every state change.
 * Scans resume from a position like SortedIndex does; a partition created while a scan
 * is running is not visited by that scan (a page is read in one turn, so none is).
 */
import type { IdsOf } from './item-ids.ts';
import { SortedIndex, type IndexEntry, type IndexPosition, type SortedIndexOptions } from './sorted-index.ts';
import { compareSortValues, type SortOrder, type SortValue } from './sort-values.ts';

export class PartitionedIndex<T> {
  private readonly partitions = new Map<SortValue, SortedIndex<T>>();
  /** ascending, null last */
  private keys: SortValue[] = [];
  private entryCount = 0;

  constructor(
    private readonly ids: IdsOf<T>,
    private readonly options: SortedIndexOptions = {},
  ) {}

  get size(): number {
    return this.entryCount;
  }

  insert(key: SortValue, item: T): void {
    this.partition(key).insert(key, item);
    this.entryCount++;
  }

  remove(key: SortValue, item: T): boolean {
    const partition = this.partitions.get(key);
    if (partition === undefined || !partition.remove(key, item)) return false;
    this.entryCount--;
    if (partition.size === 0) {
      this.partitions.delete(key);
      this.keys.splice(this.keys.indexOf(key), 1);
    }
    return true;
  }

  /** Same contract as SortedIndex.loadAscending: parallel arrays in ascending (key, id) order. */
  loadAscending(keys: readonly SortValue[], items: readonly T[]): void {
    if (this.entryCount > 0) throw new Error('PartitionedIndex.loadAscending needs an empty index');
    let start = 0;
    while (start < keys.length) {
      const key = keys[start] as SortValue;
      let end = start + 1;
      while (end < keys.length && keys[end] === key) end++;
      this.partition(key).loadAscending(keys.slice(start, end), items.slice(start, end));
      this.entryCount += end - start;
      start = end;
    }
  }

  /** As SortedIndex.scan, `matches` included. */
  scan(order: SortOrder, after?: IndexPosition, matches?: (item: T) => boolean): IterableIterator<IndexEntry<T>> {
    return this.scanFrom(this.keysInListingOrder(order), order, after, matches);
  }

  checkInvariants(): void {
    let total = 0;
    for (const [key, partition] of this.partitions) {
      partition.checkInvariants();
      for (const entry of partition.scan('asc')) if (entry.key !== key) throw new Error(`entry with key ${String(entry.key)} in partition ${String(key)}`);
      total += partition.size;
    }
    if (total !== this.entryCount) throw new Error(`partitions hold ${total} entries, count says ${this.entryCount}`);
  }

  private *scanFrom(
    keys: SortValue[],
    order: SortOrder,
    after: IndexPosition | undefined,
    matches: ((item: T) => boolean) | undefined,
  ): Generator<IndexEntry<T>, void, undefined> {
    let first = 0;
    if (after !== undefined) {
      first = keys.findIndex((key) => !isBeforeInListing(key, after.key, order));
      if (first === -1) return;
    }
    for (let index = first; index < keys.length; index++) {
      const key = keys[index] as SortValue;
      const partition = this.partitions.get(key);
      if (partition === undefined) continue;
      yield* partition.scan(order, after !== undefined && index === first && key === after.key ? after : undefined, matches);
    }
  }

  /** Keys in the listing order: ascending or descending, null last either way. */
  private keysInListingOrder(order: SortOrder): SortValue[] {
    if (order === 'asc') return [...this.keys];
    const hasNull = this.keys[this.keys.length - 1] === null;
    const nonNull = hasNull ? this.keys.slice(0, -1) : [...this.keys];
    nonNull.reverse();
    if (hasNull) nonNull.push(null);
    return nonNull;
  }

  private partition(key: SortValue): SortedIndex<T> {
    let partition = this.partitions.get(key);
    if (partition === undefined) {
      partition = new SortedIndex<T>(this.ids, { ...this.options, onlyKey: key });
      this.partitions.set(key, partition);
      let at = this.keys.length;
      while (at > 0 && compareSortValues(this.keys[at - 1] as SortValue, key) > 0) at--;
      this.keys.splice(at, 0, key);
    }
    return partition;
  }
}

/** Whether `key` comes strictly before `position` in the listing order (nulls last both ways). */
function isBeforeInListing(key: SortValue, position: SortValue, order: SortOrder): boolean {
  if (key === position) return false;
  if (position === null) return true;
  if (key === null) return false;
  const ascending = compareSortValues(key, position);
  return order === 'asc' ? ascending < 0 : ascending > 0;
}
