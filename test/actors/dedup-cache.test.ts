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

  test('restoring into a smaller bound keeps the newest keys; a partly filled cache restores and keeps filling', () => {
    const live = new DedupCache(6);
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) live.add(key);
    const smaller = new DedupCache(3);
    smaller.restore(live.toSnapshot());
    expect(smaller.toSnapshot()).toEqual(['e', 'f', 'g']);
    expect(['b', 'e'].map((key) => smaller.has(key))).toEqual([false, true]);
    smaller.add('h');
    expect(smaller.toSnapshot()).toEqual(['f', 'g', 'h']);

    const partly = new DedupCache(4);
    partly.restore(['x', 'y']);
    for (const key of ['z', 'w', 'v']) partly.add(key);
    expect(partly.toSnapshot()).toEqual(['y', 'z', 'w', 'v']);
    expect(partly.size).toBe(4);
  });

  test('keys given twice (not what a snapshot holds) are taken as adds would take them', () => {
    const cache = new DedupCache(3);
    cache.restore(['a', 'b', 'a', 'c']);
    expect(cache.toSnapshot()).toEqual(['a', 'b', 'c']);
    cache.add('d');
    expect(cache.toSnapshot()).toEqual(['b', 'c', 'd']);
    const roomy = new DedupCache(5);
    roomy.restore(['a', 'b', 'a', 'c']);
    for (const key of ['d', 'e', 'f']) roomy.add(key);
    expect(roomy.toSnapshot()).toEqual(['b', 'c', 'd', 'e', 'f']);
  });
});
