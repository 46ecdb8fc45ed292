/**
 * One tier (minutes, hours or days) of one series: its buckets in time order. A bucket is
 * open (mutable, open-bucket.ts) while its period runs; once the period has passed it is
 * sealed into bytes (bucket-codec.ts) appended to one buffer, with its bucket number and
 * byte offset in typed arrays beside it. Nothing is ever recomputed from jobs.
 *
 * An event that arrives after its bucket was sealed (an agent's spool sent late) opens a
 * second, open bucket with the same number; reads add both, and the next seal merges them
 * into the sealed one (a rebuild of the tier, which only late events cost).
 *
 * Sealed bytes are never changed in place: growing, merging and dropping expired buckets
 * build new arrays. So a snapshot may hold views of them while writes go on (it copies
 * the open buckets, which are small, when it is taken).
 *
 * Sealing changes how a bucket is kept, never what it holds, so when it happens does not
 * matter to replay: a restart, a replica and the live process answer the same.
 */
import { BIN_COUNT } from './duration-bins.ts';
import { ByteReader, ByteWriter, decodeBucketInto, encodeBucket } from './bucket-codec.ts';
import { ALL_PARTS, MeasureSum, type BucketTarget } from './measure-sum.ts';
import { OpenBucket } from './open-bucket.ts';

/**
 * Open buckets one tier keeps before it seals the oldest half early (events far apart in
 * time, such as a replayed spool): bounds their memory, and sealing half at once spreads a
 * rebuild's cost (when some are older than sealed ones) over many buckets.
 */
const OPEN_BUCKETS_MAX = 64;

/** One writer for every bucket appended (it is copied into the tier's bytes at once). */
const SCRATCH = new ByteWriter(1024);

/** A tier's buckets as a snapshot holds them: sealed ones as stored, open ones encoded the same way. */
export interface TierSnapshot {
  /** Int32 bucket numbers, as bytes */
  starts: Uint8Array;
  /** Uint32 byte offsets of each bucket in `bytes`, one more than there are buckets, as bytes */
  offsets: Uint8Array;
  bytes: Uint8Array;
}

export class BucketTier {
  private starts: Int32Array = new Int32Array(0);
  /** offsets[i] is where sealed bucket i's bytes begin; offsets[count] where the next will */
  private offsets: Uint32Array = new Uint32Array(1);
  private bytes: Uint8Array = new Uint8Array(0);
  /** sealed buckets are [head, count) (those before head have expired) */
  private head = 0;
  private count = 0;
  /** moves whenever the sealed buckets change (a seal, a merge, an expiry): what a reader's memo of them is keyed by */
  private sealedVersionCounter = 0;
  private readonly open = new Map<number, OpenBucket>();

  constructor(readonly widthMs: number) {}

  bucketOf(atMs: number): number {
    return Math.floor(atMs / this.widthMs);
  }

  /** The open bucket that takes writes for bucket number `bucket`. */
  write(bucket: number): OpenBucket {
    let open = this.open.get(bucket);
    if (open === undefined) {
      if (this.open.size >= OPEN_BUCKETS_MAX) this.sealOldestOpen();
      open = new OpenBucket();
      this.open.set(bucket, open);
    }
    return open;
  }

  /** Seals every open bucket numbered below `beforeBucket` (their periods have passed). */
  seal(beforeBucket: number): void {
    if (this.open.size === 0) return;
    const due: number[] = [];
    for (const bucket of this.open.keys()) if (bucket < beforeBucket) due.push(bucket);
    if (due.length > 0) this.sealBuckets(due);
  }

  /** Adds every bucket of `other` (same width) to this tier: a series folded into `(other)`. */
  absorb(other: BucketTier): void {
    other.visit(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, ALL_PARTS, (bucket) => {
      let open = this.open.get(bucket);
      if (open === undefined) this.open.set(bucket, (open = new OpenBucket()));
      return open;
    });
    if (this.open.size > 0) this.sealBuckets([...this.open.keys()]);
  }

  /** Drops buckets numbered below `firstKept`. */
  expire(firstKept: number): void {
    for (const bucket of this.open.keys()) if (bucket < firstKept) this.open.delete(bucket);
    let head = this.head;
    while (head < this.count && this.starts[head]! < firstKept) head++;
    if (head !== this.head) this.sealedVersionCounter++;
    this.head = head;
    // The dropped part's memory is given back once it is half of what the arrays hold.
    if (this.head > 0 && this.head * 2 >= this.count) this.rebuild([]);
  }

  get sealedVersion(): number {
    return this.sealedVersionCounter;
  }

  /** Adds every sealed bucket (`sealed`) or every open one to `target`: a total kept for months is memoized over the sealed ones. */
  addAll(target: BucketTarget, parts: number, which: 'sealed' | 'open'): void {
    if (which === 'open') {
      for (const open of this.open.values()) open.addInto(target, parts);
      return;
    }
    const reader = new ByteReader(this.bytes, this.offsets[this.head]!, this.offsets[this.count]!);
    for (let at = this.head; at < this.count; at++) decodeBucketInto(reader, target, parts, BIN_COUNT);
  }

  get isEmpty(): boolean {
    return this.head === this.count && this.open.size === 0;
  }

  /** The newest bucket number held, or -Infinity. */
  get newestBucket(): number {
    let newest = this.count > this.head ? this.starts[this.count - 1]! : Number.NEGATIVE_INFINITY;
    for (const bucket of this.open.keys()) newest = Math.max(newest, bucket);
    return newest;
  }

  /** Adds the buckets numbered in [from, to) to `target` (PART bits in `parts`). */
  addRange(from: number, to: number, target: BucketTarget, parts: number): void {
    this.visit(from, to, parts, () => target);
  }

  /** Adds each bucket in [from, to) to `targets[floor((bucket - from) / step)]`. */
  addSteps(from: number, to: number, step: number, targets: readonly BucketTarget[], parts: number): void {
    this.visit(from, to, parts, (bucket) => targets[Math.floor((bucket - from) / step)]!);
  }

  /** Every bucket held, as a sum each (a sealed one and a late open one of the same number together), oldest first. */
  sums(parts: number): Array<[number, MeasureSum]> {
    const byBucket = new Map<number, MeasureSum>();
    this.visit(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, parts, (bucket) => {
      let sum = byBucket.get(bucket);
      if (sum === undefined) byBucket.set(bucket, (sum = new MeasureSum()));
      return sum;
    });
    return [...byBucket].sort((a, b) => a[0] - b[0]);
  }

  /** Heap held by this tier's arrays and open buckets (an estimate: what the memory figures report). */
  get byteSize(): number {
    let open = 0;
    for (const bucket of this.open.values()) open += bucket.bytes + 48;
    return this.starts.byteLength + this.offsets.byteLength + this.bytes.byteLength + open + 96;
  }

  /** The tier as of now: views of the sealed bytes (never changed in place), the open buckets encoded. */
  toSnapshot(): TierSnapshot {
    const openBuckets = [...this.open.keys()].sort((a, b) => a - b);
    const lastSealed = this.count > this.head ? this.starts[this.count - 1]! : Number.NEGATIVE_INFINITY;
    if (openBuckets.length > 0 && openBuckets[0]! <= lastSealed) {
      // a late event's bucket among the sealed ones: the snapshot gets a merged copy
      const merged = this.merged(openBuckets);
      return { starts: bytesOf(merged.starts), offsets: bytesOf(merged.offsets), bytes: merged.bytes };
    }
    const sealedCount = this.count - this.head;
    const starts = new Int32Array(sealedCount + openBuckets.length);
    starts.set(this.starts.subarray(this.head, this.count));
    const offsets = new Uint32Array(starts.length + 1);
    const base = this.offsets[this.head]!;
    for (let at = 0; at <= sealedCount; at++) offsets[at] = this.offsets[this.head + at]! - base;
    const writer = new ByteWriter();
    openBuckets.forEach((bucket, at) => {
      starts[sealedCount + at] = bucket;
      encodeBucket(writer, this.open.get(bucket)!);
      offsets[sealedCount + at + 1] = offsets[sealedCount]! + writer.length;
    });
    const sealedBytes = this.bytes.subarray(base, this.offsets[this.count]);
    const bytes = writer.length === 0 ? sealedBytes : concat(sealedBytes, writer.bytes.subarray(0, writer.length));
    return { starts: bytesOf(starts), offsets: bytesOf(offsets), bytes };
  }

  /**
   * A tier from `toSnapshot`, every bucket sealed. Checked whole (numbers rising, offsets
   * inside the bytes, every bucket decodable), so a damaged snapshot is refused here rather
   * than read wrong later.
   */
  static fromSnapshot(widthMs: number, snapshot: TierSnapshot): BucketTier {
    const tier = new BucketTier(widthMs);
    const starts = new Int32Array(ownCopy(snapshot.starts, 4));
    const offsets = new Uint32Array(ownCopy(snapshot.offsets, 4));
    const bytes = new Uint8Array(ownCopy(snapshot.bytes, 1));
    if (offsets.length !== starts.length + 1 || offsets[0] !== 0 || offsets[starts.length] !== bytes.length) {
      throw new RangeError('a metrics tier in the snapshot has offsets that do not match its buckets');
    }
    for (let at = 0; at < starts.length; at++) {
      if (at > 0 && starts[at]! <= starts[at - 1]!) throw new RangeError('a metrics tier in the snapshot has buckets out of order');
      const reader = new ByteReader(bytes, offsets[at]!, offsets[at + 1]!);
      decodeBucketInto(reader, null, 0, BIN_COUNT);
      if (reader.offset !== offsets[at + 1]) throw new RangeError('a metrics bucket in the snapshot is not the length its offsets say');
    }
    tier.starts = starts;
    tier.offsets = offsets;
    tier.bytes = bytes;
    tier.count = starts.length;
    return tier;
  }

  private visit(from: number, to: number, parts: number, targetOf: (bucket: number) => BucketTarget): void {
    let at = this.firstSealedAtOrAfter(from);
    // sealed buckets lie back to back: one reader walks them in order
    const reader = new ByteReader(this.bytes, this.offsets[at]!, this.offsets[this.count]!);
    for (; at < this.count; at++) {
      const bucket = this.starts[at]!;
      if (bucket >= to) break;
      decodeBucketInto(reader, targetOf(bucket), parts, BIN_COUNT);
    }
    for (const [bucket, open] of this.open) if (bucket >= from && bucket < to) open.addInto(targetOf(bucket), parts);
  }

  private firstSealedAtOrAfter(bucket: number): number {
    let low = this.head;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.starts[middle]! < bucket) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private sealOldestOpen(): void {
    const keys = [...this.open.keys()].sort((a, b) => a - b);
    this.sealBuckets(keys.slice(0, keys.length - OPEN_BUCKETS_MAX / 2));
  }

  private sealBuckets(buckets: number[]): void {
    buckets.sort((a, b) => a - b);
    this.sealedVersionCounter++;
    const appendOnly = this.count === this.head || buckets[0]! > this.starts[this.count - 1]!;
    if (appendOnly) {
      for (const bucket of buckets) this.append(bucket, this.open.get(bucket)!);
    } else {
      this.rebuild(buckets);
    }
    for (const bucket of buckets) this.open.delete(bucket);
  }

  private append(bucket: number, open: OpenBucket): void {
    const writer = SCRATCH;
    writer.reset();
    encodeBucket(writer, open);
    this.ensureRoom(1, writer.length);
    const end = this.offsets[this.count]!;
    const bytes = this.bytes;
    const encoded = writer.bytes;
    for (let at = 0; at < writer.length; at++) bytes[end + at] = encoded[at]!;
    this.starts[this.count] = bucket;
    this.count++;
    this.offsets[this.count] = end + writer.length;
  }

  /** Replaces the arrays with the live sealed buckets and the open `merging` ones merged in. */
  private rebuild(merging: readonly number[]): void {
    const merged = this.merged(merging);
    this.starts = merged.starts;
    this.offsets = merged.offsets;
    this.bytes = merged.bytes;
    this.head = 0;
    this.count = merged.starts.length;
  }

  /**
   * New arrays (this tier unchanged) holding the live sealed buckets and the open ones named
   * by `merging` (sorted), in bucket order; a sealed and an open bucket of the same number
   * become one.
   */
  private merged(merging: readonly number[]): { starts: Int32Array; offsets: Uint32Array; bytes: Uint8Array } {
    const total = this.count - this.head + merging.length;
    const starts = new Int32Array(total);
    const offsets = new Uint32Array(total + 1);
    const writer = new ByteWriter(Math.max(64, this.offsets[this.count]! - this.offsets[this.head]! + 64 * merging.length));
    let written = 0;
    const put = (bucket: number, encode: () => void): void => {
      starts[written] = bucket;
      encode();
      offsets[++written] = writer.length;
    };
    let at = this.head;
    let next = 0;
    while (at < this.count || next < merging.length) {
      const sealed = at < this.count ? this.starts[at]! : Number.POSITIVE_INFINITY;
      const opened = next < merging.length ? merging[next]! : Number.POSITIVE_INFINITY;
      if (sealed < opened) {
        const from = this.offsets[at]!;
        const until = this.offsets[at + 1]!;
        put(sealed, () => writer.append(this.bytes.subarray(from, until)));
        at++;
        continue;
      }
      let open = this.open.get(opened)!;
      if (sealed === opened) {
        const both = new OpenBucket();
        open.addInto(both, ALL_PARTS);
        decodeBucketInto(new ByteReader(this.bytes, this.offsets[at]!, this.offsets[at + 1]!), both, ALL_PARTS, BIN_COUNT);
        open = both;
        at++;
      }
      const bucket = open;
      put(opened, () => encodeBucket(writer, bucket));
      next++;
    }
    return { starts: starts.slice(0, written), offsets: offsets.slice(0, written + 1), bytes: writer.toBytes() };
  }

  private ensureRoom(buckets: number, byteCount: number): void {
    if (this.count + buckets > this.starts.length) {
      const capacity = grownCapacity(this.count + buckets);
      const starts = new Int32Array(capacity);
      starts.set(this.starts.subarray(0, this.count));
      const offsets = new Uint32Array(capacity + 1);
      offsets.set(this.offsets.subarray(0, this.count + 1));
      this.starts = starts;
      this.offsets = offsets;
    }
    const needed = this.offsets[this.count]! + byteCount;
    if (needed > this.bytes.length) {
      const grown = new Uint8Array(grownCapacity(needed));
      grown.set(this.bytes.subarray(0, this.offsets[this.count]!));
      this.bytes = grown;
    }
  }
}

/**
 * An eighth more than needed: a tier of 90 days of hours grows one bucket at a time for
 * months, and doubling would leave up to half of its bytes unused for good (at 200 tasks
 * over 90 days a quarter more left about 6 MB unused; each growth copies a tier of one
 * series, some hundred kilobytes, once every few days).
 */
function grownCapacity(needed: number): number {
  return Math.ceil(needed * 1.125) + 8;
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.length + second.length);
  joined.set(first);
  joined.set(second, first.length);
  return joined;
}

const bytesOf = (array: ArrayBufferView): Uint8Array => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** A copy with a buffer of its own (aligned for the element type, and no view into a snapshot file's buffer). */
function ownCopy(bytes: unknown, elementBytes: number): ArrayBuffer {
  if (!(bytes instanceof Uint8Array) || bytes.length % elementBytes !== 0) throw new RangeError('a metrics tier in the snapshot is not whole numbers');
  return Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer;
}
