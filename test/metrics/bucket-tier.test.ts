/**
 * One tier of one series: whatever the order of writes, seals and expiries, a read gives
 * what a plain map of bucket -> sums would; a snapshot taken mid-way keeps what it saw while
 * writes go on; a fold adds one tier into another; damaged snapshots are refused.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { BucketTier } from '../../actors/metrics/bucket-tier.ts';
import { BIN_COUNT } from '../../actors/metrics/duration-bins.ts';
import { ALL_PARTS, MeasureSum, PART } from '../../actors/metrics/measure-sum.ts';

const RUNS = process.env.FUZZ_RUNS !== undefined && /^\d+$/.test(process.env.FUZZ_RUNS) ? Number(process.env.FUZZ_RUNS) : 200;

type Operation =
  | { op: 'count'; bucket: number; index: number; count: number }
  | { op: 'bin'; bucket: number; kind: 'run' | 'wait'; bin: number }
  | { op: 'gauge'; bucket: number; depth: number; ageMs: number }
  | { op: 'seal'; before: number }
  | { op: 'expire'; firstKept: number };

const bucket = fc.integer({ min: 1_000, max: 1_040 });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('count' as const), bucket, index: fc.integer({ min: 0, max: 3 }), count: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('bin' as const), bucket, kind: fc.constantFrom('run' as const, 'wait' as const), bin: fc.integer({ min: 0, max: BIN_COUNT - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('gauge' as const), bucket, depth: fc.integer({ min: 0, max: 1e9 }), ageMs: fc.integer({ min: 0, max: 2 ** 40 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('seal' as const), before: bucket }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('expire' as const), firstKept: fc.integer({ min: 990, max: 1_020 }) }) },
);

/** The model: a sum per bucket, dropped below the highest expiry. */
function apply(tier: BucketTier, model: Map<number, MeasureSum>, operation: Operation): void {
  const sumOf = (at: number): MeasureSum => {
    let sum = model.get(at);
    if (sum === undefined) model.set(at, (sum = new MeasureSum()));
    return sum;
  };
  switch (operation.op) {
    case 'count':
      tier.write(operation.bucket).addCount(operation.index, operation.count);
      sumOf(operation.bucket).addCount(operation.index, operation.count);
      return;
    case 'bin':
      tier.write(operation.bucket).addBin(operation.kind, operation.bin, 1);
      sumOf(operation.bucket).addBin(operation.kind, operation.bin, 1);
      return;
    case 'gauge':
      tier.write(operation.bucket).addGauges(1, operation.depth, operation.depth, operation.ageMs, operation.ageMs);
      sumOf(operation.bucket).addGauges(1, operation.depth, operation.depth, operation.ageMs, operation.ageMs);
      return;
    case 'seal':
      tier.seal(operation.before);
      return;
    case 'expire':
      tier.expire(operation.firstKept);
      for (const at of model.keys()) if (at < operation.firstKept) model.delete(at);
  }
}

/** A comparable picture of a sum. */
function picture(sum: MeasureSum) {
  return { counts: [...sum.counts], run: [...sum.bins('run')], wait: [...sum.bins('wait')], gauges: [...sum.gauges], runCount: sum.runCount, waitCount: sum.waitCount };
}

function rangeOf(read: (target: MeasureSum) => void): ReturnType<typeof picture> {
  const sum = new MeasureSum();
  read(sum);
  return picture(sum);
}

describe('bucket tier', () => {
  test('given any writes, seals and expiries, then every bucket and every range reads as the model of plain sums does', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 120 }), fc.integer({ min: 990, max: 1_045 }), fc.integer({ min: 0, max: 30 }), (operations, from, length) => {
        const tier = new BucketTier(60_000);
        const model = new Map<number, MeasureSum>();
        for (const each of operations) apply(tier, model, each);
        expect(tier.sums(ALL_PARTS).map(([at, sum]) => [at, picture(sum)])).toEqual(
          [...model].filter(([, sum]) => !sum.isEmpty).sort((a, b) => a[0] - b[0]).map(([at, sum]) => [at, picture(sum)]),
        );
        const expected = new MeasureSum();
        for (const [at, sum] of model) if (at >= from && at < from + length) expected.add(sum);
        expect(rangeOf((target) => tier.addRange(from, from + length, target, ALL_PARTS))).toEqual(picture(expected));
        // the same buckets through a snapshot, all sealed there
        const restored = BucketTier.fromSnapshot(60_000, structuredClone(tier.toSnapshot()));
        expect(rangeOf((target) => restored.addRange(from, from + length, target, ALL_PARTS))).toEqual(picture(expected));
      }),
      { numRuns: RUNS },
    );
  });

  test('given a bucket sealed once its period passed, when a late event for it arrives, then reads add it at once and the next seal merges it into one bucket', () => {
    const tier = new BucketTier(60_000);
    tier.write(10).addCount(0, 2);
    tier.seal(11);
    tier.write(10).addCount(0, 3);

    expect(rangeOf((target) => tier.addRange(10, 11, target, PART.counts)).counts[0]).toBe(5);
    tier.seal(11);
    expect(tier.sums(ALL_PARTS).map(([at, sum]) => [at, sum.counts[0]])).toEqual([[10, 5]]);
  });

  test('given a snapshot taken, when writes, seals and expiries go on, then the snapshot still holds what the tier held when it was taken', () => {
    const tier = new BucketTier(60_000);
    for (let at = 0; at < 50; at++) tier.write(at).addBin('run', at % BIN_COUNT, 1);
    tier.seal(40);
    const snapshot = tier.toSnapshot();
    const before = BucketTier.fromSnapshot(60_000, structuredClone(snapshot)).sums(ALL_PARTS).map(([at, sum]) => [at, picture(sum)]);

    for (let at = 50; at < 400; at++) tier.write(at).addBin('wait', 7, 1);
    tier.write(3).addCount(1, 9);
    tier.seal(400);
    tier.expire(30);

    const after = BucketTier.fromSnapshot(60_000, structuredClone(snapshot)).sums(ALL_PARTS).map(([at, sum]) => [at, picture(sum)]);
    expect(after).toEqual(before);
    expect(after).toHaveLength(50);
  });

  test('given two tiers, when one absorbs the other, then every bucket holds the sum of both', () => {
    const into = new BucketTier(60_000);
    const other = new BucketTier(60_000);
    into.write(5).addCount(0, 1);
    into.seal(6);
    other.write(5).addCount(0, 2);
    other.write(7).addBin('run', 12, 4);

    into.absorb(other);

    expect(into.sums(ALL_PARTS).map(([at, sum]) => [at, sum.counts[0], sum.runCount])).toEqual([
      [5, 3, 0],
      [7, 0, 4],
    ]);
  });

  test('given more open buckets than a tier keeps, then the oldest are sealed early and nothing is lost', () => {
    const tier = new BucketTier(60_000);
    for (let at = 0; at < 100; at++) tier.write(at * 3).addCount(2, 1);
    expect(rangeOf((target) => tier.addRange(0, 300, target, PART.counts)).counts[2]).toBe(100);
  });

  test('given a damaged snapshot, then restoring it is refused with a reason', () => {
    const tier = new BucketTier(60_000);
    tier.write(1).addCount(0, 1);
    tier.write(2).addBin('run', 3, 1);
    tier.seal(3);
    const good = tier.toSnapshot();
    const bytes = Uint8Array.from(good.bytes);
    bytes[bytes.length - 1] = 0x80; // a number that never ends
    expect(() => BucketTier.fromSnapshot(60_000, { ...good, bytes })).toThrow(/ends inside a number|length its offsets say/);
    const starts = new Int32Array([2, 1]);
    expect(() => BucketTier.fromSnapshot(60_000, { ...good, starts: new Uint8Array(starts.buffer) })).toThrow(/out of order/);
    expect(() => BucketTier.fromSnapshot(60_000, { ...good, offsets: new Uint8Array(8) })).toThrow(/offsets/);
    expect(() => BucketTier.fromSnapshot(60_000, { ...good, bytes: 'text' as unknown as Uint8Array })).toThrow(/whole numbers/);
  });
});
