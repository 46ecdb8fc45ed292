import { describe, expect, test } from 'bun:test';
import { LoadedJobsByKey } from '../../actors/connection/loaded-jobs-by-key.ts';

interface Item {
  key: string;
}

describe('lookup of loaded jobs by key', () => {
  const items: Item[] = Array.from({ length: 5_000 }, (_, i) => ({ key: `job-${i}-${(i * 7919) % 1009}` }));

  test('finds every item by its key and nothing else', () => {
    const table = new LoadedJobsByKey(items, (item) => item.key);
    for (const item of items) expect(table.get(item.key)).toBe(item);
    for (const missing of ['', 'job-', 'job-5000-0', 'JOB-1-7919']) expect(table.get(missing)).toBeUndefined();
    expect(table.size).toBe(items.length);
  });

  test('after removals the others stay reachable (probe runs pass removed slots) and the removed are gone', () => {
    const table = new LoadedJobsByKey(items, (item) => item.key);
    for (let i = 0; i < items.length; i += 2) expect(table.delete(items[i]!.key)).toBe(true);
    expect(table.delete(items[0]!.key)).toBe(false);
    for (let i = 0; i < items.length; i++) expect(table.get(items[i]!.key)).toBe(i % 2 === 0 ? undefined : items[i]);
    expect(table.size).toBe(items.length / 2);
  });

  test('keys with the same characters in another order, and an empty load', () => {
    const anagrams = ['abc', 'acb', 'bac', 'bca', 'cab', 'cba'].map((key) => ({ key }));
    const table = new LoadedJobsByKey(anagrams, (item) => item.key);
    for (const item of anagrams) expect(table.get(item.key)).toBe(item);
    expect(new LoadedJobsByKey<Item>([], (item) => item.key).get('abc')).toBeUndefined();
  });
});
