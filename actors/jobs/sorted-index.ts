/**
 * In-memory sorted index behind cursor-paginated job lists.
 *
 * Listing order (decisions, "Job lists": ties broken by id, nulls last in both orders):
 *   asc:  non-null keys ascending (ties: id ascending), then null keys (id ascending)
 *   desc: non-null keys descending (ties: id descending), then null keys (id descending)
 *
 * Null keys are kept in a list of their own. Both lists hold their entries in ascending
 * (key, id) order, so `desc` is each list read backwards and "nulls last" is only the order in
 * which the two lists are read: no comparison inside the index depends on the direction.
 */

import { BlockList } from './block-list.ts';
import type { IdsOf } from './item-ids.ts';
import type { SortOrder, SortValue } from './sort-values.ts';

export { compareIds, compareInOrder, compareSortValues, type SortOrder, type SortValue } from './sort-values.ts';

/** A place in the listing order. A value, not a reference: the entry it names may be gone. */
export interface IndexPosition {
  key: SortValue;
  id: string;
}

export interface IndexEntry<T> {
  key: SortValue;
  item: T;
}

export interface SortedIndexOptions {
  /** Most entries a block holds before it splits; tests use tiny blocks to exercise splits. */
  blockCapacity?: number;
  /** Every entry will have this key (a partition): no key is stored per entry, and another key is refused. */
  onlyKey?: SortValue;
}

/**
 * 500 entries: 500 slots of 8 bytes plus the array header fit one of JSC's 4 KB size classes
 * (8.1 bytes a slot measured, against 10.5 for 512 slots, which spill into the next class).
 * Moving entries within a block is then a ~4 KB memmove per array, while 1M entries make only
 * about 2,000 blocks, so the binary search over blocks stays short.
 */
const DEFAULT_BLOCK_CAPACITY = 500;
const MIN_BLOCK_CAPACITY = 4;

export class SortedIndex<T> {
  private readonly keyed: BlockList<T>;
  private readonly nullKeyed: BlockList<T>;

  constructor(ids: IdsOf<T>, options: SortedIndexOptions = {}) {
    const capacity = options.blockCapacity ?? DEFAULT_BLOCK_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity < MIN_BLOCK_CAPACITY) {
      throw new Error(`SortedIndex blockCapacity must be an integer >= ${MIN_BLOCK_CAPACITY}, got ${capacity}`);
    }
    this.keyed = new BlockList(ids, capacity, options.onlyKey);
    // Its keys are all null: no need to store them.
    this.nullKeyed = new BlockList(ids, capacity, null);
  }

  /** The caller guarantees that (key, id of item) is not present yet. */
  insert(key: SortValue, item: T): void {
    // NaN equals nothing, so it would silently break every comparison after it.
    if (typeof key === 'number' && Number.isNaN(key)) throw new Error('SortedIndex key must not be NaN');
    this.listFor(key).insert(key, item);
  }

  /** `key` must be the key the item was inserted with. False when no such entry exists. */
  remove(key: SortValue, item: T): boolean {
    return this.listFor(key).remove(key, item);
  }

  get size(): number {
    return this.keyed.size + this.nullKeyed.size;
  }

  /**
   * Fills an empty index from parallel arrays already in ascending (key, id) order with
   * null keys last (see ascending-order.ts): full blocks, no searching. Recovery's fast path.
   */
  loadAscending(keys: readonly SortValue[], items: readonly T[]): void {
    if (this.size > 0) throw new Error('SortedIndex.loadAscending needs an empty index');
    if (keys.length !== items.length) throw new Error('SortedIndex.loadAscending needs one item per key');
    let firstNull = keys.length;
    while (firstNull > 0 && keys[firstNull - 1] === null) firstNull--;
    this.keyed.fill(keys, items, 0, firstNull);
    this.nullKeyed.fill(keys, items, firstNull, keys.length);
  }

  clear(): void {
    this.keyed.clear();
    this.nullKeyed.clear();
  }

  /**
   * Entries strictly after `after` in `order`, from the start when `after` is undefined. Lazy:
   * pulling a 50-item page costs one seek plus 50 steps however large the index is.
   *
   * The iterator survives mutations of the index between steps: it then resumes strictly after
   * the last entry it passed, as a fresh scan from that position would.
   *
   * With `matches`, only entries whose item it accepts are yielded: the same as filtering the
   * scan, without an entry object and a generator step per refused item.
   */
  scan(order: SortOrder, after?: IndexPosition, matches?: (item: T) => boolean): IterableIterator<IndexEntry<T>> {
    return order === 'asc' ? this.scanAscending(after, matches) : this.scanDescending(after, matches);
  }

  /** Throws when the internal layout is broken; for tests, O(n). */
  checkInvariants(): void {
    this.keyed.checkInvariants('keyed', (key) => key !== null);
    this.nullKeyed.checkInvariants('null-keyed', (key) => key === null);
  }

  /** Array slots held, used or not: about 16 bytes each (a key and an item reference). */
  get allocatedSlots(): number {
    return this.keyed.allocatedSlots + this.nullKeyed.allocatedSlots;
  }

  /** Entries per block, keyed list then null list; for tests and diagnostics. */
  blockSizes(): { keyed: number[]; nullKeyed: number[] } {
    return { keyed: this.keyed.blockSizes(), nullKeyed: this.nullKeyed.blockSizes() };
  }

  private listFor(key: SortValue): BlockList<T> {
    return key === null ? this.nullKeyed : this.keyed;
  }

  private *scanAscending(after: IndexPosition | undefined, matches: ((item: T) => boolean) | undefined): Generator<IndexEntry<T>, void, undefined> {
    // A position in the null list lies after every keyed entry.
    if (after === undefined || after.key !== null) yield* this.keyed.ascending(after, matches);
    yield* this.nullKeyed.ascending(after !== undefined && after.key === null ? after : undefined, matches);
  }

  private *scanDescending(after: IndexPosition | undefined, matches: ((item: T) => boolean) | undefined): Generator<IndexEntry<T>, void, undefined> {
    if (after === undefined || after.key !== null) yield* this.keyed.descending(after, matches);
    yield* this.nullKeyed.descending(after !== undefined && after.key === null ? after : undefined, matches);
  }
}
