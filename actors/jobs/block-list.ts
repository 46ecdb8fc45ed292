/**
 * The storage behind SortedIndex: a chunked sorted array (see BlockList below).
 */
import type { IndexEntry, IndexPosition } from './sorted-index.ts';
import { itemIds, type IdsOf, type ItemIds } from './item-ids.ts';
import { compareSortValues, type SortValue } from './sort-values.ts';

const SMALLEST_BLOCK_ARRAY = 8;
/**
 * How many blocks away an insert into a full block may push entries before it splits the block.
 * 4 kept every block full for timestamps arriving up to 2,000 positions late (1 in 1,000 slots
 * unused; 73% with splitting alone), at up to 4 extra block moves for the unlucky insert; 8
 * gained little more.
 */
const SPILL_REACH = 4;

/**
 * Keys and items in parallel arrays rather than one object per entry (1M jobs times up to
 * seven indexes would otherwise be 7M small objects). The index sizes the arrays itself and
 * never lets `push`/`splice` resize them: JSC's own growth left blocks a third to a half empty
 * in memory (27-35 bytes an entry measured, against ~16 with sized arrays). Slots from `count`
 * on are unused and hold null/undefined, so that a removed job is not kept alive by a stale slot.
 */
interface Block<T> {
  /** null in a list whose entries all have one key (see BlockList's `onlyKey`) */
  keys: SortValue[] | null;
  items: (T | undefined)[];
  count: number;
}

/**
 * A chunked sorted array: blocks of at most `capacity` entries, each sorted, all in ascending
 * (key, id) order end to end. Finding a place is a binary search over the blocks' last entries
 * and then inside one block; inserting or removing moves at most a few blocks' entries.
 *
 * Occupancy decides memory, since a block that has filled up once keeps arrays of full capacity:
 * - An insert at a block boundary goes to the end of the block before it when that has room.
 *   In-order arrivals (timestamps; equal keys with time-ordered ids) thus leave full blocks.
 * - An insert into a full block passes entries along to the nearest block with room within
 *   SPILL_REACH blocks, or to a new last block when the list ends within reach: late
 *   timestamps land in the last blocks, and splitting there would leave half-empty blocks
 *   behind for good. Away from the end, an insert at the boundary of two full blocks starts a
 *   new block between them. Only when none of this applies does a block split in half.
 * - Removal merges two neighbours holding at most half a block together, so any two adjacent
 *   blocks hold more than half a block: at least a quarter full on average, whatever happens.
 *   (checkInvariants verifies this.)
 */
export class BlockList<T> {
  private blocks: Block<T>[] = [];
  private count = 0;
  // Bumped on every mutation, so that a live scan knows its block/offset may be stale.
  private version = 0;
  private readonly mergeLimit: number;
  private readonly keyed: boolean;
  private readonly onlyKey: SortValue;
  private readonly ids: ItemIds<T>;

  /**
   * `onlyKey`: every entry has this key (a partition of PartitionedIndex, the null list of
   * SortedIndex), so blocks keep no key array: 8 bytes less per entry. Undefined: keys vary.
   */
  constructor(
    ids: IdsOf<T>,
    private readonly capacity: number,
    onlyKey?: SortValue,
  ) {
    this.ids = itemIds(ids);
    this.mergeLimit = capacity >> 1;
    this.keyed = onlyKey === undefined;
    this.onlyKey = onlyKey ?? null;
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.blocks = [];
    this.count = 0;
    this.version++;
  }

  /** Fills an empty list with entries [start, end) of ordered parallel arrays, in full blocks. */
  fill(keys: readonly SortValue[], items: readonly T[], start: number, end: number): void {
    for (let index = start; index < end; index++) {
      const key = keys[index] as SortValue;
      if (typeof key === 'number' && Number.isNaN(key)) throw new Error('SortedIndex key must not be NaN');
      this.checkKey(key);
      if (index > start && compareSortValues(keys[index - 1] as SortValue, key) > 0) {
        throw new Error('SortedIndex.loadAscending keys are not in ascending order');
      }
    }
    for (let from = start; from < end; from += this.capacity) {
      const count = Math.min(this.capacity, end - from);
      if (count === this.capacity) {
        // A full block's arrays are exactly a slice: one copy, ~10x faster than filling new arrays.
        this.blocks.push({ keys: this.keyed ? keys.slice(from, from + count) : null, items: items.slice(from, from + count), count });
        continue;
      }
      const block = this.newBlock(count);
      for (let offset = 0; offset < count; offset++) {
        if (block.keys !== null) block.keys[offset] = keys[from + offset] as SortValue;
        block.items[offset] = items[from + offset];
      }
      block.count = count;
      this.blocks.push(block);
    }
    this.count += end - start;
    this.version++;
  }

  insert(key: SortValue, item: T): void {
    this.checkKey(key);
    const id = this.ids.idOf(item);
    const blocks = this.blocks;
    this.count++;
    this.version++;

    // After every entry, the common case (timestamps; time-ordered ids within one key):
    // one comparison with the last entry instead of a search.
    const lastBlock = blocks[blocks.length - 1];
    const b = lastBlock !== undefined && this.compareAt(key, id, lastBlock, lastBlock.count - 1) > 0 ? blocks.length : this.firstBlockReaching(key, id, false);
    if (b === blocks.length) {
      // After every entry: the common case for timestamps.
      const last = blocks[b - 1];
      if (last !== undefined && last.count < this.capacity) this.insertAt(last, last.count, key, item);
      else blocks.push(this.singletonBlock(key, item));
      return;
    }
    const block = blocks[b] as Block<T>;
    const offset = this.firstOffsetReaching(block, key, id, false);
    const previous = blocks[b - 1];

    // Between two blocks: the end of the previous block is as good a place as the start of this one.
    if (offset === 0 && previous !== undefined && previous.count < this.capacity) {
      this.insertAt(previous, previous.count, key, item);
      return;
    }
    if (block.count < this.capacity) {
      this.insertAt(block, offset, key, item);
      return;
    }
    // The block is full.
    if (offset === 0 && blocks.length - 1 - b >= SPILL_REACH) {
      // Between two full blocks, away from the end: mostly the end of a run of equal keys whose
      // ids arrive in order (a state or a task name with time-ordered ids). The next inserts land
      // here too, so a new block here fills up, and nothing has to move.
      blocks.splice(b, 0, this.singletonBlock(key, item));
      return;
    }
    // Pass entries along to a block with room; split only when none is near.
    const roomAfter = this.blockWithRoomAfter(b);
    if (roomAfter !== undefined) {
      // Each full block on the way hands its last entry on; the one with room takes the final one.
      for (let from = roomAfter - 1; from >= b; from--) this.moveLastToFrontOf(blocks[from] as Block<T>, blocks[from + 1] as Block<T>);
      this.insertAt(block, offset, key, item);
      return;
    }
    // Here offset > 0: near the end a block with room after was always found (or made).
    const roomBefore = this.blockWithRoomBefore(b);
    if (roomBefore !== undefined) {
      for (let from = roomBefore + 1; from <= b; from++) this.moveFirstToEndOf(blocks[from] as Block<T>, blocks[from - 1] as Block<T>);
      this.insertAt(block, offset - 1, key, item);
      return;
    }
    const half = this.capacity >> 1;
    const right = this.newBlock(this.capacity);
    this.moveTail(block, half, right);
    blocks.splice(b + 1, 0, right);
    if (offset <= half) this.insertAt(block, offset, key, item);
    else this.insertAt(right, offset - half, key, item);
  }

  /** The item with this (key, id), if any: two binary searches. */
  find(key: SortValue, id: string): T | undefined {
    const block = this.blocks[this.firstBlockReaching(key, id, false)];
    if (block === undefined) return undefined;
    const offset = this.firstOffsetReaching(block, key, id, false);
    return this.compareAt(key, id, block, offset) === 0 ? block.items[offset] : undefined;
  }

  /** Every item in ascending order, copied into a typed array from index 0: one native copy per block. */
  copyInto<A extends { set(items: ArrayLike<T>, offset: number): void }>(out: A): A {
    let next = 0;
    for (const block of this.blocks) {
      out.set(block.count === block.items.length ? (block.items as T[]) : (block.items.slice(0, block.count) as T[]), next);
      next += block.count;
    }
    return out;
  }

  /** Every item in ascending order; the list must not change while this runs. */
  *items(): Generator<T, void, undefined> {
    for (const block of this.blocks) for (let offset = 0; offset < block.count; offset++) yield block.items[offset] as T;
  }

  remove(key: SortValue, item: T): boolean {
    const id = this.ids.idOf(item);
    const blocks = this.blocks;
    let b = this.firstBlockReaching(key, id, false);
    const block = blocks[b];
    if (block === undefined) return false;
    const offset = this.firstOffsetReaching(block, key, id, false);
    if (this.compareAt(key, id, block, offset) !== 0) return false;

    removeAt(block, offset);
    this.count--;
    this.version++;

    if (block.count === 0) {
      blocks.splice(b, 1);
      // The neighbours of the dropped block are adjacent now.
      if (b > 0) this.mergeIfSmall(b - 1);
      return true;
    }
    if (b > 0 && this.mergeIfSmall(b - 1)) b--;
    this.mergeIfSmall(b);
    return true;
  }

  /** `matches`: entries whose item it refuses are passed over without being yielded (a filtered list walks thousands). */
  *ascending(after: IndexPosition | undefined, matches?: (item: T) => boolean): Generator<IndexEntry<T>, void, undefined> {
    let resumeAfter = after;
    let b = 0;
    let offset = 0;
    let seenVersion = -1;
    // after a mutation the walk resumes after the last entry passed, yielded or not
    let passedAny = false;
    let lastKey: SortValue = null;
    let lastItem = undefined as T;

    for (;;) {
      if (seenVersion !== this.version) {
        if (passedAny) resumeAfter = { key: lastKey, id: this.ids.idOf(lastItem) };
        if (resumeAfter === undefined) {
          b = 0;
          offset = 0;
        } else {
          b = this.firstBlockReaching(resumeAfter.key, resumeAfter.id, true);
          const block = this.blocks[b];
          offset = block === undefined ? 0 : this.firstOffsetReaching(block, resumeAfter.key, resumeAfter.id, true);
        }
        seenVersion = this.version;
      }
      const block = this.blocks[b];
      if (block === undefined) return;
      if (offset >= block.count) {
        b++;
        offset = 0;
        continue;
      }
      lastItem = block.items[offset] as T;
      lastKey = this.keyAt(block, offset);
      offset++;
      passedAny = true;
      if (matches === undefined || matches(lastItem)) yield { key: lastKey, item: lastItem };
    }
  }

  *descending(after: IndexPosition | undefined, matches?: (item: T) => boolean): Generator<IndexEntry<T>, void, undefined> {
    let resumeBefore = after;
    let b = 0;
    // Offset of the next entry to visit; -1 means "the last entry of the previous block".
    let offset = -1;
    let seenVersion = -1;
    let passedAny = false;
    let lastKey: SortValue = null;
    let lastItem = undefined as T;

    for (;;) {
      if (seenVersion !== this.version) {
        if (passedAny) resumeBefore = { key: lastKey, id: this.ids.idOf(lastItem) };
        if (resumeBefore === undefined) {
          b = this.blocks.length;
          offset = -1;
        } else {
          // The entry before the first one that is >= the position.
          b = this.firstBlockReaching(resumeBefore.key, resumeBefore.id, false);
          const block = this.blocks[b];
          offset = block === undefined ? -1 : this.firstOffsetReaching(block, resumeBefore.key, resumeBefore.id, false) - 1;
        }
        seenVersion = this.version;
      }
      if (offset < 0) {
        b--;
        const block = this.blocks[b];
        if (block === undefined) return;
        offset = block.count - 1;
        continue;
      }
      const block = this.blocks[b] as Block<T>;
      lastItem = block.items[offset] as T;
      lastKey = this.keyAt(block, offset);
      offset--;
      passedAny = true;
      if (matches === undefined || matches(lastItem)) yield { key: lastKey, item: lastItem };
    }
  }

  checkInvariants(name: string, keyAllowed: (key: SortValue) => boolean): void {
    const fail = (message: string): never => {
      throw new Error(`SortedIndex ${name} list: ${message}`);
    };
    let total = 0;
    let previousKey: SortValue = null;
    let previous: T | undefined;
    this.blocks.forEach((block, b) => {
      const count = block.count;
      if (count === 0) fail(`block ${b} is empty`);
      if (count > this.capacity) fail(`block ${b} holds ${count} > ${this.capacity}`);
      const arrayLength = block.items.length;
      if (arrayLength !== this.arrayLengthFor(arrayLength) || (block.keys !== null && block.keys.length !== arrayLength) || arrayLength < count) {
        fail(`block ${b} has arrays of ${block.keys?.length} keys and ${arrayLength} items for ${count} entries`);
      }
      if ((block.keys === null) === this.keyed) fail(`block ${b} ${this.keyed ? 'has no' : 'has a'} key array`);
      const next = this.blocks[b + 1];
      if (next !== undefined && count + next.count <= this.mergeLimit) {
        fail(`blocks ${b} and ${b + 1} hold ${count + next.count} <= ${this.mergeLimit} together`);
      }
      for (let i = count; i < arrayLength; i++) {
        if ((block.keys !== null && block.keys[i] !== null) || block.items[i] !== undefined) fail(`block ${b} keeps a value in unused slot ${i}`);
      }
      for (let i = 0; i < count; i++) {
        const key = this.keyAt(block, i);
        const item = block.items[i] as T;
        if (!keyAllowed(key)) fail(`block ${b} holds key ${String(key)}`);
        if (previous !== undefined && (compareSortValues(previousKey, key) || this.ids.compareItems(previous, item)) >= 0) {
          fail(`(${String(key)}, ${this.ids.idOf(item)}) at block ${b} offset ${i} is not after (${String(previousKey)}, ${this.ids.idOf(previous)})`);
        }
        previousKey = key;
        previous = item;
      }
      total += count;
    });
    if (total !== this.count) fail(`size is ${this.count} but blocks hold ${total}`);
  }

  get allocatedSlots(): number {
    return this.blocks.reduce((slots, block) => slots + block.items.length, 0);
  }

  blockSizes(): number[] {
    return this.blocks.map((block) => block.count);
  }

  private keyAt(block: Block<T>, offset: number): SortValue {
    return block.keys === null ? this.onlyKey : (block.keys[offset] as SortValue);
  }

  private checkKey(key: SortValue): void {
    if (!this.keyed && key !== this.onlyKey) throw new Error(`SortedIndex list of key ${String(this.onlyKey)} cannot take key ${String(key)}`);
  }

  /** (key, id) against the entry at `offset` of `block`, ascending. */
  private compareAt(key: SortValue, id: string, block: Block<T>, offset: number): number {
    const byKey = compareSortValues(key, this.keyAt(block, offset));
    return byKey !== 0 ? byKey : -this.ids.compareTo(block.items[offset] as T, id);
  }

  /**
   * Index of the first block whose last entry is after (key, id), or also equal when not
   * `strict`; blocks.length when there is none. The position then lies inside that block.
   */
  private firstBlockReaching(key: SortValue, id: string, strict: boolean): number {
    const blocks = this.blocks;
    let low = 0;
    let high = blocks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const block = blocks[middle] as Block<T>;
      const comparison = this.compareAt(key, id, block, block.count - 1);
      if (comparison < 0 || (comparison === 0 && !strict)) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** Offset of the first entry of `block` after (key, id), or also equal when not `strict`. */
  private firstOffsetReaching(block: Block<T>, key: SortValue, id: string, strict: boolean): number {
    let low = 0;
    let high = block.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const comparison = this.compareAt(key, id, block, middle);
      if (comparison < 0 || (comparison === 0 && !strict)) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /**
   * The closest block after block b, within SPILL_REACH, that is not full. When the list ends
   * within reach, a new last block: the last blocks are where late timestamps land, and
   * splitting a full last block in half would leave half-empty blocks behind for good.
   */
  private blockWithRoomAfter(b: number): number | undefined {
    for (let candidate = b + 1; candidate <= b + SPILL_REACH; candidate++) {
      const block = this.blocks[candidate];
      if (block === undefined) {
        this.blocks.push(this.newBlock(1));
        return candidate;
      }
      if (block.count < this.capacity) return candidate;
    }
    return undefined;
  }

  /** The closest block before block b, within SPILL_REACH, that is not full. */
  private blockWithRoomBefore(b: number): number | undefined {
    for (let candidate = b - 1; candidate >= 0 && candidate >= b - SPILL_REACH; candidate--) {
      if ((this.blocks[candidate] as Block<T>).count < this.capacity) return candidate;
    }
    return undefined;
  }

  /** Merges block b and b + 1 when they hold at most half a block together. */
  private mergeIfSmall(b: number): boolean {
    const left = this.blocks[b];
    const right = this.blocks[b + 1];
    if (left === undefined || right === undefined) return false;
    if (left.count + right.count > this.mergeLimit) return false;
    this.moveTail(right, 0, left);
    this.blocks.splice(b + 1, 1);
    return true;
  }

  /**
   * A block with arrays for `entries` entries. Blocks start small and grow, so that the many
   * small indexes (one per task name, per connection, the null lists) cost little.
   */
  private newBlock(entries: number): Block<T> {
    const length = this.arrayLengthFor(entries);
    return {
      keys: this.keyed ? new Array<SortValue>(length).fill(null) : null,
      items: new Array<T | undefined>(length).fill(undefined),
      count: 0,
    };
  }

  private singletonBlock(key: SortValue, item: T): Block<T> {
    const block = this.newBlock(1);
    this.insertAt(block, 0, key, item);
    return block;
  }

  /**
   * Array lengths halve down from the capacity (500, 250, 125, 63, ...): growth doubles, and
   * a block that fills up ends at exactly the capacity, the one size tuned to the allocator.
   * (The smaller steps cost 10-13 bytes a slot rather than 8; they only serve small blocks.)
   */
  private arrayLengthFor(entries: number): number {
    let length = this.capacity;
    while (length > SMALLEST_BLOCK_ARRAY && Math.ceil(length / 2) >= entries) length = Math.ceil(length / 2);
    return length;
  }

  /** Reallocates the block's arrays when they cannot hold `entries` entries. */
  private makeRoom(block: Block<T>, entries: number): void {
    if (block.items.length >= entries) return;
    const grown = this.newBlock(entries);
    for (let i = 0; i < block.count; i++) {
      if (grown.keys !== null) grown.keys[i] = this.keyAt(block, i);
      grown.items[i] = block.items[i];
    }
    block.keys = grown.keys;
    block.items = grown.items;
  }

  /** The caller makes sure the block holds fewer than `capacity` entries. */
  private insertAt(block: Block<T>, offset: number, key: SortValue, item: T): void {
    this.makeRoom(block, block.count + 1);
    if (offset < block.count) {
      block.keys?.copyWithin(offset + 1, offset, block.count);
      block.items.copyWithin(offset + 1, offset, block.count);
    }
    if (block.keys !== null) block.keys[offset] = key;
    block.items[offset] = item;
    block.count++;
  }

  /** Appends the entries of `from` starting at `start` to `to`, and empties them in `from`. */
  private moveTail(from: Block<T>, start: number, to: Block<T>): void {
    this.makeRoom(to, to.count + from.count - start);
    for (let i = start; i < from.count; i++) {
      if (to.keys !== null) to.keys[to.count] = this.keyAt(from, i);
      to.items[to.count] = from.items[i];
      to.count++;
    }
    from.keys?.fill(null, start, from.count);
    from.items.fill(undefined, start, from.count);
    from.count = start;
  }

  private moveLastToFrontOf(block: Block<T>, next: Block<T>): void {
    const last = block.count - 1;
    const key = this.keyAt(block, last);
    const item = block.items[last] as T;
    removeAt(block, last);
    this.insertAt(next, 0, key, item);
  }

  private moveFirstToEndOf(block: Block<T>, previous: Block<T>): void {
    const key = this.keyAt(block, 0);
    const item = block.items[0] as T;
    removeAt(block, 0);
    this.insertAt(previous, previous.count, key, item);
  }
}

function removeAt<T>(block: Block<T>, offset: number): void {
  const last = block.count - 1;
  if (offset < last) {
    block.keys?.copyWithin(offset, offset + 1, block.count);
    block.items.copyWithin(offset, offset + 1, block.count);
  }
  if (block.keys !== null) block.keys[last] = null;
  block.items[last] = undefined;
  block.count = last;
}
