import { describe, expect, test } from 'bun:test';
import { JobsByKey } from '../../actors/connection/jobs-by-key.ts';
import { StringColumn } from '../../actors/connection/string-column.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

interface Item {
  key: string;
}
const keyOf = (item: Item) => item.key;

describe('jobs by key', () => {
  test('keys read from a string column are hashed from its bytes as from the strings: loaded and added rows are found by their keys', () => {
    const keys = ['job-1', 'caf\u00e9', 'ünïcode-😀', '', 'x'.repeat(512)];
    const column = new StringColumn();
    column.ensureRows(keys.length * 2);
    keys.forEach((key, row) => column.set(row, key));
    const fromColumn = { keyOf: (row: number) => column.get(row), hasKey: (row: number, key: string) => column.equals(row, key), hashFrom: (row: number, start: number) => column.hashFrom(row, start) };
    const table = new JobsByKey(fromColumn, [0, 1, 2]);
    for (const row of [3, 4]) table.add(row);
    keys.forEach((key, row) => expect(table.get(key)).toBe(row));
    expect(table.get('job-2')).toBeUndefined();
  });

  const items: Item[] = Array.from({ length: 5_000 }, (_, i) => ({ key: `job-${i}-${(i * 7919) % 1009}` }));

  test('loaded: finds every item by its key and nothing else', () => {
    const table = new JobsByKey(keyOf, items);
    for (const item of items) expect(table.get(item.key)).toBe(item);
    for (const missing of ['', 'job-', 'job-5000-0', 'JOB-1-7919']) expect(table.get(missing)).toBeUndefined();
    expect(table.size).toBe(items.length);
  });

  test('after removals the others stay reachable (probe runs pass removed slots) and the removed are gone', () => {
    const table = new JobsByKey(keyOf, items);
    for (let i = 0; i < items.length; i += 2) expect(table.delete(items[i]!.key)).toBe(true);
    expect(table.delete(items[0]!.key)).toBe(false);
    for (let i = 0; i < items.length; i++) expect(table.get(items[i]!.key)).toBe(i % 2 === 0 ? undefined : items[i]);
    expect(table.size).toBe(items.length / 2);
  });

  test('thousands of absent keys are not found, whatever slot their probe starts at', () => {
    const table = new JobsByKey(keyOf, items);
    for (let i = 0; i < 5_000; i++) expect(table.get(`absent-${i}`)).toBeUndefined();
  });

  test('keys whose hashes all collide: found by comparing keys along one probe run, through removals and re-adds', () => {
    const collide = () => 7;
    const few = items.slice(0, 40);
    const table = new JobsByKey(keyOf, few, collide);
    for (const item of few) expect(table.get(item.key)).toBe(item);
    expect(table.get('absent')).toBeUndefined();
    for (let i = 0; i < few.length; i += 3) expect(table.delete(few[i]!.key)).toBe(true);
    for (let i = 0; i < few.length; i++) expect(table.get(few[i]!.key)).toBe(i % 3 === 0 ? undefined : few[i]);
    const again = { key: few[0]!.key };
    table.add(again);
    expect(table.get(again.key)).toBe(again);
    expect(table.size).toBe(few.length - 13);
  });

  test('a loaded table holds exactly its items: a key added, removed and looked up again is gone', () => {
    const table = new JobsByKey(keyOf, items.slice(0, 3), () => 0);
    const added = { key: 'added' };
    table.add(added);
    expect(table.get('added')).toBe(added);
    expect(table.delete('added')).toBe(true);
    expect(table.get('added')).toBeUndefined();
    expect(table.occupancy).toEqual({ slots: 16, live: 3, removed: 1 });
  });

  test('sized to the power of two at least twice the items loaded', () => {
    expect(new JobsByKey(keyOf, items.slice(0, 8)).occupancy.slots).toBe(16);
    expect(new JobsByKey(keyOf, items.slice(0, 9)).occupancy.slots).toBe(32);
  });

  test('keys with the same characters in another order, and an empty table', () => {
    const anagrams = ['abc', 'acb', 'bac', 'bca', 'cab', 'cba'].map((key) => ({ key }));
    const table = new JobsByKey(keyOf, anagrams);
    for (const item of anagrams) expect(table.get(item.key)).toBe(item);
    expect(new JobsByKey<Item>(keyOf).get('abc')).toBeUndefined();
    expect(new JobsByKey<Item>(keyOf).size).toBe(0);
  });

  test('emptied by removals and filled again, the table stays at most half used, removed slots counted, and a rebuild drops them', () => {
    const table = new JobsByKey(keyOf, items);
    expect(table.occupancy).toEqual({ slots: 16_384, live: 5_000, removed: 0 }); // the power of two at least twice 5,000
    for (const item of items) table.delete(item.key);
    expect(table.occupancy).toEqual({ slots: 16_384, live: 0, removed: 5_000 });
    table.add({ key: 'first' });
    expect(table.occupancy.slots).toBe(16_384); // far from half used: no rebuild
    expect(table.delete('first')).toBe(true);
    let rebuilt = false;
    const added = Array.from({ length: 9_000 }, (_, i) => ({ key: `next-${i}` }));
    for (const item of added) {
      const removedBefore = table.occupancy.removed;
      table.add(item);
      const { slots, live, removed } = table.occupancy;
      expect((live + removed) * 2).toBeLessThanOrEqual(slots);
      if (removedBefore > 1 && removed === 0) rebuilt = true;
    }
    expect(rebuilt).toBe(true);
    expect(table.occupancy.live).toBe(9_000);
    for (const item of added) expect(table.get(item.key)).toBe(item);
    for (const item of items) expect(table.get(item.key)).toBeUndefined();
  });

  test('a key added again after its removal takes back the removed slot it hashes to', () => {
    const table = new JobsByKey(keyOf, [{ key: 'again' }]);
    table.delete('again');
    expect(table.occupancy).toEqual({ slots: 16, live: 0, removed: 1 });
    table.add({ key: 'again' });
    expect(table.occupancy).toEqual({ slots: 16, live: 1, removed: 0 });
  });

  for (const loaded of [0, 3, 700]) {
    test(`${loaded} loaded, then random adds and removes (growing, reusing rows, rebuilding past removed slots) answer as a Map does`, () => {
      const random = new SeededRandom(loaded + 11);
      const start = Array.from({ length: loaded }, (_, i) => ({ key: `loaded-${i}` }));
      const table = new JobsByKey(keyOf, start);
      const model = new Map(start.map((item) => [item.key, item]));
      let next = 0;
      for (let step = 0; step < 6_000; step++) {
        // adds outweigh removes for the first half (the table grows), then removes do (it shrinks)
        const adding = model.size === 0 || random.next() < (step < 3_000 ? 0.7 : 0.3);
        if (adding) {
          const item = { key: `added-${next++}` };
          table.add(item);
          model.set(item.key, item);
        } else {
          const keys = [...model.keys()];
          const key = keys[random.int(keys.length)]!;
          expect(table.delete(key)).toBe(true);
          model.delete(key);
          expect(table.delete(key)).toBe(false);
        }
        const { slots, live, removed } = table.occupancy;
        expect(live).toBe(model.size);
        expect((live + removed) * 2).toBeLessThanOrEqual(slots); // probe runs end at an empty slot
        if (step % 500 === 0) for (const [key, item] of model) expect(table.get(key)).toBe(item);
      }
      expect(table.size).toBe(model.size);
      for (const [key, item] of model) expect(table.get(key)).toBe(item);
      for (let i = 0; i < next; i++) if (!model.has(`added-${i}`)) expect(table.get(`added-${i}`)).toBeUndefined();
    });
  }
});
