/**
 * The partition of a connection: FNV-1a 32 over UTF-8 bytes, modulo the count. Values are
 * pinned (every node and every version must compute the same), and 10k random ids spread
 * evenly over 16 partitions.
 */
import { expect, test } from 'bun:test';
import { fnv1a32, inPartition, partitionOf } from '../../actors/partition-of.ts';

test('FNV-1a 32 matches the published test vectors, over UTF-8 bytes rather than UTF-16 units', () => {
  expect(fnv1a32('')).toBe(0x811c9dc5);
  expect(fnv1a32('a')).toBe(0xe40c292c);
  expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  // 'é' is two UTF-8 bytes (c3 a9); hashing its single UTF-16 unit would give another value
  expect(fnv1a32('é')).toBe(0x1e9de8c1);
});

test('a connection id maps to the same partition for a given count, pinned', () => {
  const id = '0b6f1c2e-6a4d-4b8f-9f53-2d0c5b1e7a90';
  expect(partitionOf(id, 16)).toBe(3);
  expect(partitionOf(id, 64)).toBe(35);
  expect(partitionOf(id, 1)).toBe(0);
  expect(partitionOf('a', 64)).toBe(44);
  expect(inPartition(id, { partition: 35, partitions: 64 })).toBe(true);
  expect(inPartition(id, { partition: 3, partitions: 64 })).toBe(false);
});

test('a count that is not a positive integer is refused', () => {
  for (const count of [0, -1, 1.5, Number.NaN]) expect(() => partitionOf('a', count)).toThrow(/partition count must be a positive integer/);
});

test('10k random ids spread over 16 partitions within 20% of the mean (over 5 standard deviations)', () => {
  const counts = new Array<number>(16).fill(0);
  for (let i = 0; i < 10_000; i++) counts[partitionOf(crypto.randomUUID(), 16)]!++;
  const mean = 10_000 / 16;
  for (const count of counts) {
    expect(count).toBeGreaterThan(mean * 0.8);
    expect(count).toBeLessThan(mean * 1.2);
  }
});
