import { describe, expect, test } from 'bun:test';
import { DedupCache } from '../../actors/connection/dedup-cache.ts';

describe('dedup keys', () => {
  test('given more keys than the bound, the oldest are forgotten first; lookups do not refresh', () => {
    const cache = new DedupCache(3);
    for (const key of ['a', 'b', 'c']) cache.add(key);
    expect(cache.has('a')).toBe(true); // a lookup: must not save 'a' from eviction
    cache.add('d');
    expect(['a', 'b', 'c', 'd'].map((key) => cache.has(key))).toEqual([false, true, true, true]);
    cache.add('b'); // already present: no change of order
    cache.add('e');
    expect(cache.toSnapshot()).toEqual(['c', 'd', 'e']);
    expect(cache.size).toBe(3);
  });

  test('a snapshot restored in order reproduces the same future evictions', () => {
    const live = new DedupCache(4);
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) live.add(key);
    const restored = new DedupCache(4);
    restored.restore(live.toSnapshot());
    for (const cache of [live, restored]) cache.add('g');
    expect(restored.toSnapshot()).toEqual(live.toSnapshot());
  });
});
