import { describe, expect, test } from 'bun:test';
import { InvalidMetricsSnapshotError } from '../../actors/metrics/invalid-metrics-snapshot-error.ts';
import { TaggedRing } from '../../actors/metrics/tagged-ring.ts';

const CHANNELS = { events: 'count', totalMs: 'total' } as const;
const SLOT_COUNT = 10;

const newRing = (): TaggedRing<keyof typeof CHANNELS> => new TaggedRing(SLOT_COUNT, CHANNELS);

describe('tagged ring', () => {
  test('given an untouched ring, when read, then every bucket is zero and its snapshot is empty', () => {
    const ring = newRing();

    expect(ring.read(1_000, 'events')).toBe(0);
    expect(ring.sum(0, 100, 'totalMs')).toBe(0);
    expect(ring.toSnapshot()).toEqual({ buckets: [], values: { events: [], totalMs: [] } });
  });

  test('given writes to one bucket, when read, then the channels hold their own sums', () => {
    const ring = newRing();

    ring.add(1_003, 'events', 1);
    ring.add(1_003, 'events', 1);
    ring.add(1_003, 'totalMs', 12.5);

    expect(ring.read(1_003, 'events')).toBe(2);
    expect(ring.read(1_003, 'totalMs')).toBe(12.5);
  });

  test('given a bucket one lap later than a written one, when written, then the slot is reset and the old bucket reads zero', () => {
    const ring = newRing();
    ring.add(1_003, 'events', 5);

    ring.add(1_003 + SLOT_COUNT, 'events', 1);

    expect(ring.read(1_003, 'events')).toBe(0);
    expect(ring.read(1_003 + SLOT_COUNT, 'events')).toBe(1);
    expect(ring.read(1_003 + SLOT_COUNT, 'totalMs')).toBe(0);
  });

  test('given a slot holding a newer bucket, when an older bucket of that slot is written, then the write is dropped', () => {
    const ring = newRing();
    ring.add(1_013, 'events', 1);

    ring.add(1_003, 'events', 1);

    expect(ring.read(1_003, 'events')).toBe(0);
    expect(ring.read(1_013, 'events')).toBe(1);
  });

  test('given a stale slot that was never rewritten, when read for the bucket one lap later, then it reads zero', () => {
    const ring = newRing();
    ring.add(1_003, 'events', 4);

    expect(ring.read(1_013, 'events')).toBe(0);
    expect(ring.sum(1_004, SLOT_COUNT, 'events')).toBe(0);
    expect(ring.sum(1_000, SLOT_COUNT, 'events')).toBe(4);
  });

  test('given buckets before the epoch, when written and read, then they behave like any other', () => {
    const ring = newRing();

    ring.add(-3, 'events', 2);
    ring.add(7, 'events', 1);

    expect(ring.read(-3, 'events')).toBe(0);
    expect(ring.read(7, 'events')).toBe(1);
    ring.add(-13, 'events', 1);
    expect(ring.read(-13, 'events')).toBe(0);
  });

  test('when a bucket is not an integer, then it throws instead of writing a stray property', () => {
    expect(() => newRing().add(1.5, 'events', 1)).toThrow();
  });

  test('given a snapshot taken with more slots, when loaded into a smaller ring, then colliding buckets keep the newer', () => {
    const wide = new TaggedRing(20, CHANNELS);
    wide.add(1_003, 'events', 1);
    wide.add(1_013, 'events', 2);
    wide.add(1_014, 'totalMs', 3);

    const narrow = TaggedRing.fromSnapshot(wide.toSnapshot(), SLOT_COUNT, CHANNELS);

    expect(narrow.read(1_003, 'events')).toBe(0);
    expect(narrow.read(1_013, 'events')).toBe(2);
    expect(narrow.read(1_014, 'totalMs')).toBe(3);
  });

  test('when a snapshot is malformed, then fromSnapshot throws InvalidMetricsSnapshotError', () => {
    const corrupt: unknown[] = [
      undefined,
      [],
      { buckets: [1.5], values: { events: [1], totalMs: [0] } },
      { buckets: [1], values: { events: [1] } },
      { buckets: [1], values: { events: [2 ** 32], totalMs: [0] } },
      { buckets: [1], values: { events: [1], totalMs: [Number.NaN] } },
      { buckets: [1], values: { events: [1], totalMs: [-1] } },
    ];

    for (const data of corrupt) {
      expect(() => TaggedRing.fromSnapshot(data, SLOT_COUNT, CHANNELS)).toThrow(InvalidMetricsSnapshotError);
    }
  });
});
