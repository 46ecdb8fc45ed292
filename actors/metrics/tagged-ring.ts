import { InvalidMetricsSnapshotError } from './invalid-metrics-snapshot-error.ts';

/**
 * How a channel is stored. `count`: whole events, Uint32 (4 bytes a slot; more than 4 billion
 * events in one slot is out of reach, and it would wrap). `total`: summed amounts such as
 * milliseconds, Float64.
 */
export type ChannelKind = 'count' | 'total';

export type ChannelKinds<Channel extends string> = Readonly<Record<Channel, ChannelKind>>;

/** Plain-object form: one row per written slot, one column per channel, so msgpack keeps it small. */
export interface TaggedRingSnapshot<Channel extends string> {
  buckets: number[];
  values: Record<Channel, number[]>;
}

interface RingStorage<Channel extends string> {
  // The absolute bucket each slot holds; NaN = never written (NaN equals no bucket).
  // Float64 so that any bucket number of a valid Date fits exactly.
  tags: Float64Array;
  values: Record<Channel, Uint32Array | Float64Array>;
}

const UINT32_MAX = 0xffff_ffff;

/**
 * A fixed ring of counter slots addressed by absolute bucket number (for example minutes since
 * the epoch), slot = bucket mod slotCount. Each slot is tagged with the bucket it holds, so a
 * slot last written a lap or more ago reads as zero and is reset only when written again: O(1)
 * per event, fixed memory, no background clearing.
 *
 * A write for a bucket older than the one its slot holds is dropped: it is at least a full lap
 * older than data already kept, so no read of at most `slotCount` consecutive buckets could
 * include both; keeping the newer one is what matters for reads "up to now".
 */
export class TaggedRing<Channel extends string> {
  private readonly channels: readonly Channel[];
  // Allocated on the first write: many queues never see a job, and a minute ring is ~42 KB.
  private storage: RingStorage<Channel> | undefined;

  constructor(
    readonly slotCount: number,
    private readonly kinds: ChannelKinds<Channel>,
  ) {
    if (!Number.isSafeInteger(slotCount) || slotCount < 1) {
      throw new Error(`TaggedRing slotCount must be a positive integer, got ${slotCount}`);
    }
    this.channels = Object.keys(kinds) as Channel[];
  }

  add(bucket: number, channel: Channel, amount: number): void {
    const slot = this.claimSlot(bucket);
    if (slot === undefined) return;
    const column = this.allocatedStorage().values[channel];
    column[slot] = readSlot(column, slot) + amount;
  }

  /** The channel's value for `bucket`; zero when the bucket was never written or has been overwritten. */
  read(bucket: number, channel: Channel): number {
    const storage = this.storage;
    if (storage === undefined) return 0;
    const slot = this.slotOf(bucket);
    if (readSlot(storage.tags, slot) !== bucket) return 0;
    return readSlot(storage.values[channel], slot);
  }

  /** Sum of the channel over the buckets [firstBucket, firstBucket + bucketCount). */
  sum(firstBucket: number, bucketCount: number, channel: Channel): number {
    const storage = this.storage;
    if (storage === undefined) return 0;
    const { tags } = storage;
    const column = storage.values[channel];
    // Walks the slots directly instead of calling read() per bucket: a 24h view of a queue
    // reads some 6,000 slots, and a queue list computes one view per queue.
    let slot = this.slotOf(firstBucket);
    let total = 0;
    for (let bucket = firstBucket; bucket < firstBucket + bucketCount; bucket++) {
      if (tags[slot] === bucket) total += column[slot] ?? 0;
      slot = slot + 1 === this.slotCount ? 0 : slot + 1;
    }
    return total;
  }

  toSnapshot(): TaggedRingSnapshot<Channel> {
    const snapshot = this.emptySnapshot();
    const storage = this.storage;
    if (storage === undefined) return snapshot;
    for (let slot = 0; slot < this.slotCount; slot++) {
      const bucket = readSlot(storage.tags, slot);
      if (Number.isNaN(bucket)) continue;
      snapshot.buckets.push(bucket);
      for (const channel of this.channels) {
        snapshot.values[channel].push(readSlot(storage.values[channel], slot));
      }
    }
    return snapshot;
  }

  /**
   * Rebuilds a ring from `toSnapshot` output. Rows are replayed through the write rule, so a
   * snapshot taken with another slot count still loads (colliding buckets: the newer wins).
   */
  static fromSnapshot<Channel extends string>(
    data: unknown,
    slotCount: number,
    kinds: ChannelKinds<Channel>,
  ): TaggedRing<Channel> {
    const ring = new TaggedRing(slotCount, kinds);
    const { buckets, values } = ring.parseSnapshot(data);
    buckets.forEach((bucket, row) => {
      for (const channel of ring.channels) {
        ring.add(bucket, channel, readSlot(values[channel], row));
      }
    });
    return ring;
  }

  /** The slot `bucket` may be written to, reset if it held an older bucket; undefined if it holds a newer one. */
  private claimSlot(bucket: number): number | undefined {
    const storage = this.allocatedStorage();
    const slot = this.slotOf(bucket);
    const heldBucket = readSlot(storage.tags, slot);
    if (heldBucket === bucket) return slot;
    if (heldBucket > bucket) return undefined;
    storage.tags[slot] = bucket;
    for (const channel of this.channels) storage.values[channel][slot] = 0;
    return slot;
  }

  private slotOf(bucket: number): number {
    // Callers turn times into buckets; a fraction or an unsafe integer here is a bug, and it
    // would otherwise write to a non-index property of a typed array silently.
    if (!Number.isSafeInteger(bucket)) throw new Error(`TaggedRing bucket must be a safe integer, got ${bucket}`);
    // Double modulo: buckets before the epoch are negative, and % keeps the sign.
    return ((bucket % this.slotCount) + this.slotCount) % this.slotCount;
  }

  private allocatedStorage(): RingStorage<Channel> {
    if (this.storage !== undefined) return this.storage;
    const values = {} as Record<Channel, Uint32Array | Float64Array>;
    for (const channel of this.channels) {
      values[channel] = this.kinds[channel] === 'count' ? new Uint32Array(this.slotCount) : new Float64Array(this.slotCount);
    }
    this.storage = { tags: new Float64Array(this.slotCount).fill(Number.NaN), values };
    return this.storage;
  }

  private emptySnapshot(): TaggedRingSnapshot<Channel> {
    const values = {} as Record<Channel, number[]>;
    for (const channel of this.channels) values[channel] = [];
    return { buckets: [], values };
  }

  private parseSnapshot(data: unknown): TaggedRingSnapshot<Channel> {
    if (!isPlainRecord(data)) throw new InvalidMetricsSnapshotError('ring is not an object');
    const { buckets, values } = data;
    if (!Array.isArray(buckets) || !buckets.every(Number.isSafeInteger)) {
      throw new InvalidMetricsSnapshotError('ring buckets must be an array of integers');
    }
    if (!isPlainRecord(values)) throw new InvalidMetricsSnapshotError('ring values is not an object');
    const parsed = this.emptySnapshot();
    parsed.buckets = buckets as number[];
    for (const channel of this.channels) {
      const column = values[channel];
      if (!Array.isArray(column) || column.length !== buckets.length) {
        throw new InvalidMetricsSnapshotError(`ring channel '${channel}' must have one value per bucket`);
      }
      const isValid = this.kinds[channel] === 'count' ? isUint32 : isFiniteNonNegative;
      if (!column.every(isValid)) {
        throw new InvalidMetricsSnapshotError(`ring channel '${channel}' holds a value out of range`);
      }
      parsed.values[channel] = column as number[];
    }
    return parsed;
  }
}

/** Typed-array read for an index the ring computed itself; out of range would be a bug. */
function readSlot(array: Float64Array | Uint32Array | readonly number[], index: number): number {
  const value = array[index];
  if (value === undefined) throw new Error(`TaggedRing index ${index} out of range`);
  return value;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUint32(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= UINT32_MAX;
}

function isFiniteNonNegative(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
