/**
 * Lookup by a string key of the jobs a recovery loaded: an open-addressing hash table of
 * row numbers over the loaded array. Filling a `Map` with a million fresh keys was the
 * largest single step of a restart (~0.65 s, and ~68 B per entry); this is one hash per
 * key into a typed array (8 MB per million jobs). Jobs created later go to an ordinary
 * `Map` beside it (job-store.ts); loaded jobs only ever leave (retention, eviction).
 * Keys must be distinct, as externalIds within a connection are.
 */
const EMPTY = 0;
const REMOVED = -1;

export class LoadedJobsByKey<T> {
  /** row + 1 of the item whose key hashes here (or was pushed on from here); EMPTY or REMOVED */
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly rows: Array<T | undefined>;
  private remaining: number;

  constructor(
    items: readonly T[],
    private readonly keyOf: (item: T) => string,
  ) {
    // a load factor of at most a half keeps probe runs short
    let size = 16;
    while (size < items.length * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    this.rows = items.slice();
    this.remaining = items.length;
    for (let row = 0; row < items.length; row++) {
      let at = hashOf(keyOf(items[row]!)) & this.mask;
      while (this.slots[at] !== EMPTY) at = (at + 1) & this.mask;
      this.slots[at] = row + 1;
    }
  }

  /** Items not removed yet. */
  get size(): number {
    return this.remaining;
  }

  get(key: string): T | undefined {
    const at = this.slotOf(key);
    return at < 0 ? undefined : this.rows[this.slots[at]! - 1];
  }

  delete(key: string): boolean {
    const at = this.slotOf(key);
    if (at < 0) return false;
    this.rows[this.slots[at]! - 1] = undefined; // let the job go
    this.slots[at] = REMOVED; // not EMPTY: keys pushed past this slot must stay reachable
    this.remaining--;
    return true;
  }

  private slotOf(key: string): number {
    let at = hashOf(key) & this.mask;
    for (let slot = this.slots[at]!; slot !== EMPTY; slot = this.slots[at]!) {
      if (slot !== REMOVED && this.keyOf(this.rows[slot - 1]!) === key) return at;
      at = (at + 1) & this.mask;
    }
    return -1;
  }
}

/**
 * externalIds come from clients: a fixed hash would let a tenant pick ids that all land in
 * one probe run. The starting value is drawn per process, so such ids cannot be computed
 * ahead of a restart. (Not a keyed hash in the cryptographic sense: a mitigation on par
 * with the engine's own string hashing in `Map`, which is unseeded.)
 */
const HASH_SEED = crypto.getRandomValues(new Uint32Array(1))[0]!;

/** FNV-1a over UTF-16 code units, from a per-process random starting value. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5 ^ HASH_SEED;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
