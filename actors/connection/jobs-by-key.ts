/**
 * A connection's jobs by a string key (their externalId): an open-addressing hash table of
 * row numbers over an array of the jobs, whose rows freed by removals are reused. A `Map`
 * entry cost ~68 bytes a job and filling one with a million fresh keys was the largest
 * single step of a restart (~0.65 s); here a job costs its row (8 bytes), its key's hash
 * (4) and 2-4 slots (8-16), and a recovery hashes each key once into a table sized for it.
 * Each row's hash is kept, so growing the table never hashes a key again and a probe
 * compares keys only when the hashes agree. Keys must be distinct, as externalIds within a
 * connection are.
 */
/**
 * How the table reads an item's key: the job store's items are rows whose externalIds sit as
 * bytes in a column, and a probe compares them in place rather than making a string.
 */
export interface ItemKeys<T> {
  keyOf(item: T): string;
  hasKey(item: T, key: string): boolean;
  /** FNV-1a over the key's UTF-16 code units from `start`, as `hashOf` computes it, without making the key's string (a restart hashes a million) */
  hashFrom?(item: T, start: number): number;
}

const EMPTY = 0;
const REMOVED = -1;
const SMALLEST_TABLE = 16;

export class JobsByKey<T> {
  /** row + 1 of the item whose key hashes here (or was pushed on from here); EMPTY or REMOVED */
  private slots: Int32Array;
  private mask: number;
  private readonly rows: Array<T | undefined>;
  /** the full hash of each row's key */
  private hashes: Uint32Array;
  /** rows emptied by removals, taken again before the array grows */
  private readonly freeRows: number[] = [];
  private live: number;
  /** REMOVED slots: they lengthen probe runs until the table is rebuilt */
  private removedSlots = 0;
  private readonly hasKey: (item: T, key: string) => boolean;
  /** the hash of an item's key */
  private readonly itemHash: (item: T) => number;

  /** The table filled with `items` (a recovery's jobs), sized for them. `hash`: tests make keys collide. */
  constructor(
    keys: ItemKeys<T> | ((item: T) => string),
    items: readonly T[] = [],
    private readonly hash: (key: string) => number = hashOf,
  ) {
    const keyOf = typeof keys === 'function' ? keys : keys.keyOf;
    this.hasKey = typeof keys === 'function' ? (item, key) => keys(item) === key : keys.hasKey;
    const hashFrom = typeof keys === 'function' || hash !== hashOf ? undefined : keys.hashFrom;
    this.itemHash = hashFrom === undefined ? (item) => hash(keyOf(item)) : (item) => hashFrom(item, HASH_START);
    this.rows = items.slice();
    this.live = items.length;
    this.hashes = new Uint32Array(Math.max(SMALLEST_TABLE, items.length));
    for (let row = 0; row < items.length; row++) this.hashes[row] = this.itemHash(items[row]!);
    // a load factor of at most a half keeps probe runs short
    this.slots = new Int32Array(tableSizeFor(items.length * 2));
    this.mask = this.slots.length - 1;
    for (let row = 0; row < items.length; row++) this.place(row);
  }

  /** Items held. */
  get size(): number {
    return this.live;
  }

  get(key: string): T | undefined {
    const at = this.slotOf(key);
    // Stryker disable next-line ConditionalExpression: for -1, slots[-1] is undefined and so is rows[NaN]; the test says what is meant
    return at < 0 ? undefined : this.rows[this.slots[at]! - 1];
  }

  /** Table slots, items held and removed slots: for tests of the load bound. */
  get occupancy(): { slots: number; live: number; removed: number } {
    return { slots: this.slots.length, live: this.live, removed: this.removedSlots };
  }

  /** The caller makes sure no item with this key is held. */
  add(item: T): void {
    // held and removed slots stay at most half the table: probe runs stay short and always end at an empty slot
    // Stryker disable next-line EqualityOperator: rebuilding one add earlier (>=) keeps the same bound
    if ((this.live + this.removedSlots + 1) * 2 > this.slots.length) this.rebuild();
    const row = this.freeRows.pop() ?? this.rows.length;
    this.rows[row] = item; // a new row appends
    if (row >= this.hashes.length) {
      const grown = new Uint32Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[row] = this.itemHash(item);
    this.live++;
    this.place(row);
  }

  delete(key: string): boolean {
    const at = this.slotOf(key);
    if (at < 0) return false;
    const row = this.slots[at]! - 1;
    this.rows[row] = undefined; // let the job go
    this.freeRows.push(row);
    this.slots[at] = REMOVED; // not EMPTY: keys pushed past this slot must stay reachable
    this.removedSlots++;
    this.live--;
    return true;
  }

  /** Puts a row into the first free slot of its probe run. */
  private place(row: number): void {
    let at = this.hashes[row]! & this.mask;
    while (this.slots[at]! > EMPTY) at = (at + 1) & this.mask;
    if (this.slots[at] === REMOVED) this.removedSlots--;
    this.slots[at] = row + 1;
  }

  /**
   * A new table for the rows held, with room for as many again: removed slots are dropped
   * (a table emptied by removals shrinks), no key is hashed again.
   */
  private rebuild(): void {
    // Stryker disable next-line ArithmeticOperator: the size only sets when the next rebuild comes; add keeps the bound either way
    this.slots = new Int32Array(tableSizeFor((this.live + 1) * 4));
    this.mask = this.slots.length - 1;
    this.removedSlots = 0;
    this.rows.forEach((item, row) => {
      if (item !== undefined) this.place(row);
    });
  }

  private slotOf(key: string): number {
    const hash = this.hash(key);
    let at = hash & this.mask;
    for (let slot = this.slots[at]!; slot !== EMPTY; slot = this.slots[at]!) {
      // Stryker disable next-line ConditionalExpression: the hash check only spares comparing keys that differ; a removed slot (-1) reads hashes[-2], which matches no hash
      if (slot !== REMOVED && this.hashes[slot - 1] === hash && this.hasKey(this.rows[slot - 1]!, key)) return at;
      at = (at + 1) & this.mask;
    }
    return -1;
  }
}

/** The smallest power of two of at least `slots` (and of SMALLEST_TABLE). */
function tableSizeFor(slots: number): number {
  let size = SMALLEST_TABLE;
  while (size < slots) size *= 2;
  return size;
}

/**
 * externalIds come from clients: a fixed hash would let a tenant pick ids that all land in
 * one probe run. The starting value is drawn per process, so such ids cannot be computed
 * ahead of a restart. (Not a keyed hash in the cryptographic sense: a mitigation on par
 * with the engine's own string hashing in `Map`, which is unseeded.)
 */
const HASH_SEED = crypto.getRandomValues(new Uint32Array(1))[0]!;

/** FNV-1a over UTF-16 code units, from a per-process random starting value. */
const HASH_START = 0x811c9dc5 ^ HASH_SEED;

function hashOf(key: string): number {
  let hash = HASH_START;
  // Stryker disable next-line EqualityOperator: one more round (over NaN, i.e. 0) is another hash function, as good
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
