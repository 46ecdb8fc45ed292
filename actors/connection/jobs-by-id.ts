/**
 * A connection's jobs by id: a chunked sorted array of their rows in id order (see
 * block-list.ts) rather than a Map. Ids are time-ordered UUIDv7, so a new job appends at
 * the end; a lookup is two binary searches. At a million jobs a Map entry cost ~68 bytes
 * and recovery spent about a third of its index building inserting into it; here an
 * entry is one 8-byte slot, and recovery fills blocks from the id-sorted rows.
 */
import { BlockList } from '../jobs/block-list.ts';
import { itemIds, type IdsOf, type ItemIds } from '../jobs/item-ids.ts';

const BLOCK_CAPACITY = 500;

export class JobsById<T> {
  // Every entry's key is null: the order is by id alone.
  private readonly list: BlockList<T>;
  private readonly ids: ItemIds<T>;

  constructor(ids: IdsOf<T>) {
    this.ids = itemIds(ids);
    this.list = new BlockList<T>(this.ids, BLOCK_CAPACITY, null);
  }

  get size(): number {
    return this.list.size;
  }

  get(id: string): T | undefined {
    return this.list.find(null, id);
  }

  /** The caller makes sure no item with this id is present. */
  insert(item: T): void {
    this.list.insert(null, item);
  }

  remove(item: T): boolean {
    return this.list.remove(null, item);
  }

  /** Fills an empty set from items in ascending id order, with no id twice. */
  loadSorted(items: readonly T[]): void {
    if (this.list.size > 0) throw new Error('JobsById.loadSorted needs an empty set');
    for (let index = 1; index < items.length; index++) {
      if (this.ids.compareItems(items[index - 1]!, items[index]!) >= 0) {
        throw new Error(`JobsById.loadSorted: job ${this.ids.idOf(items[index]!)} is out of id order or repeated`);
      }
    }
    this.list.fill(new Array(items.length).fill(null), items, 0, items.length);
  }

  /** In id order; must not be changed while iterating. */
  values(): IterableIterator<T> {
    return this.list.items();
  }

  /** In id order, copied into `out` from index 0 (a snapshot's capture). */
  copyInto<A extends { set(items: ArrayLike<T>, offset: number): void }>(out: A): A {
    return this.list.copyInto(out);
  }

  checkInvariants(): void {
    this.list.checkInvariants('by id', (key) => key === null);
  }
}
