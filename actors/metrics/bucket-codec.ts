/**
 * A sealed bucket as bytes: the form every bucket whose period has passed is kept in, in
 * memory and in snapshots. Unsigned varints (7 bits a byte) throughout, since nearly every
 * number is small:
 *
 *   flags               which parts follow (PART bits)
 *   counts              4 varints, if flags & counts
 *   run histogram       varint byte length of what follows, varint n, then n bins, each
 *                       varint (bin - previous bin) * 2 + (1 if its count is over 1), and
 *                       then, if so, varint count - 2; if flags & run
 *   wait histogram      the same, if flags & wait
 *
 * The histograms' byte lengths let a read of counts alone, or of one histogram, step over
 * the other parts instead of decoding them (a table of 200 tasks reads counts for its
 * throughput line).
 *   gauges              5 varints (samples, depth sum, deepest, age sum ms, oldest age ms), if flags & gauges
 *
 * A minute of one task with a handful of jobs takes a dozen bytes; an hour of a busy task
 * with run times over three doublings about a hundred. Most bins of an hour hold one job,
 * so a bin of count 1 is one byte (its step from the previous bin and that flag): at 200
 * tasks over 90 days that took a fifth off the memory.
 */
import { COUNT_KINDS, PART, type BucketTarget, type DurationKind } from './measure-sum.ts';
import type { OpenBucket, SparseBins } from './open-bucket.ts';

export class ByteWriter {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity = 64) {
    this.bytes = new Uint8Array(capacity);
  }

  /** A whole number from 0 to 2^53; arithmetic rather than bit operations, which stop at 2^31. */
  varint(value: number): void {
    let rest = Math.max(0, Math.round(value));
    this.ensure(8);
    while (rest >= 128) {
      this.bytes[this.length++] = (rest % 128) | 128;
      rest = Math.floor(rest / 128);
    }
    this.bytes[this.length++] = rest;
  }

  byte(value: number): void {
    this.ensure(1);
    this.bytes[this.length++] = value;
  }

  append(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Starts over, keeping the room already allocated (a writer reused for every bucket sealed). */
  reset(): void {
    this.length = 0;
  }

  /** The bytes written so far, as a copy of their own size. */
  toBytes(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  private ensure(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

/** Reads varints from `bytes` at `offset`, moving it. */
export class ByteReader {
  constructor(
    private readonly bytes: Uint8Array,
    public offset: number,
    private readonly end: number,
  ) {}

  /** Moves past bytes a read does not want. */
  skipTo(offset: number): void {
    if (offset > this.end) throw new RangeError('a metrics bucket ends inside a histogram');
    this.offset = offset;
  }

  varint(): number {
    // most numbers here are under 128: one byte
    const first = this.offset < this.end ? this.bytes[this.offset]! : 128;
    if (first < 128) {
      this.offset++;
      return first;
    }
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.offset >= this.end) throw new RangeError('a metrics bucket ends inside a number');
      const byte = this.bytes[this.offset++]!;
      value += (byte & 127) * scale;
      if (byte < 128) return value;
      scale *= 128;
      if (scale > 2 ** 56) throw new RangeError('a metrics bucket holds a number past 2^56');
    }
  }
}

export function encodeBucket(writer: ByteWriter, bucket: OpenBucket): void {
  const counts = bucket.counts;
  let hasCounts = false;
  for (let at = 0; at < counts.length; at++) if (counts[at] !== 0) hasCounts = true;
  const hasRun = bucket.run !== null && bucket.run.size > 0;
  const hasWait = bucket.wait !== null && bucket.wait.size > 0;
  const flags = (hasCounts ? PART.counts : 0) | (hasRun ? PART.run : 0) | (hasWait ? PART.wait : 0) | (bucket.gauges !== null ? PART.gauges : 0);
  writer.byte(flags);
  if (hasCounts) for (let at = 0; at < counts.length; at++) writer.varint(counts[at]!);
  if (hasRun) writeBins(writer, bucket.run!);
  if (hasWait) writeBins(writer, bucket.wait!);
  const gauges = bucket.gauges;
  if (gauges !== null) for (let at = 0; at < gauges.length; at++) writer.varint(gauges[at]!);
}

/** One histogram at a time is written here first, to learn its byte length. */
const HISTOGRAM_SCRATCH = new ByteWriter(1024);

function writeBins(writer: ByteWriter, bins: SparseBins): void {
  const histogram = HISTOGRAM_SCRATCH;
  histogram.reset();
  histogram.varint(bins.size);
  let previous = 0;
  for (let at = 0; at < bins.size; at++) {
    const bin = bins.binAt(at);
    const count = bins.countAt(at);
    histogram.varint((bin - previous) * 2 + (count > 1 ? 1 : 0));
    if (count > 1) histogram.varint(count - 2);
    previous = bin;
  }
  writer.varint(histogram.length);
  writer.append(histogram.bytes.subarray(0, histogram.length));
}

/**
 * Adds the parts of the bucket at `reader.offset` named by `parts` to `target` (the others'
 * histograms are stepped over), leaving the reader at the next bucket. Without a target
 * every part is decoded, as a check of the bytes (a snapshot's, before they are kept).
 */
export function decodeBucketInto(reader: ByteReader, target: BucketTarget | null, parts: number, binLimit: number): void {
  const flags = reader.varint();
  if (flags & PART.counts) {
    for (let at = 0; at < COUNT_KINDS.length; at++) {
      const count = reader.varint();
      if (target !== null && parts & PART.counts && count !== 0) target.addCount(at, count);
    }
  }
  if (flags & PART.run) readBins(reader, target, parts & PART.run ? 'run' : null, binLimit);
  if (flags & PART.wait) readBins(reader, target, parts & PART.wait ? 'wait' : null, binLimit);
  if (flags & PART.gauges) {
    // samples, depth sum, deepest, age sum, oldest age: the order of GAUGE (measure-sum.ts)
    const samples = reader.varint();
    const depthSum = reader.varint();
    const depthMax = reader.varint();
    const ageSumMs = reader.varint();
    const ageMaxMs = reader.varint();
    if (target !== null && parts & PART.gauges) target.addGauges(samples, depthSum, depthMax, ageSumMs, ageMaxMs);
  }
}

/** A histogram: added to `target` as `kind`, stepped over when a read does not want it (`kind` null), checked whole without a target. */
function readBins(reader: ByteReader, target: BucketTarget | null, kind: DurationKind | null, binLimit: number): void {
  const byteLength = reader.varint();
  const endOffset = reader.offset + byteLength;
  if (target !== null && kind === null) {
    reader.skipTo(endOffset);
    return;
  }
  const size = reader.varint();
  let bin = 0;
  for (let at = 0; at < size; at++) {
    const step = reader.varint();
    bin += Math.floor(step / 2);
    const count = step % 2 === 1 ? reader.varint() + 2 : 1;
    if (bin >= binLimit) throw new RangeError(`a metrics bucket names histogram bin ${bin}, past the layout's ${binLimit}`);
    if (target !== null) target.addBin(kind!, bin, count);
  }
  if (reader.offset !== endOffset) throw new RangeError('a metrics bucket\'s histogram is not the length it says');
}
