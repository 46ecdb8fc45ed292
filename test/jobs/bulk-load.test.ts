import { describe, expect, test } from 'bun:test';
import { ascendingOrder, sortById } from '../../actors/jobs/ascending-order.ts';
import { SortedIndex, type SortValue } from '../../actors/jobs/sorted-index.ts';

interface Item {
  id: string;
}
const idOf = (item: Item) => item.id;

/** Items with ids in shuffled order and keys drawn by `keyOf`, some null. */
function items(count: number, keyOf: (i: number) => SortValue) {
  const entries = Array.from({ length: count }, (_, i) => ({ key: keyOf(i), item: { id: `id-${String((i * 7919) % count).padStart(6, '0')}` } }));
  return entries;
}

function incremental(entries: Array<{ key: SortValue; item: Item }>) {
  const index = new SortedIndex<Item>(idOf, { blockCapacity: 8 });
  for (const entry of entries) index.insert(entry.key, entry.item);
  return index;
}

describe('bulk loading an index', () => {
  const cases: Array<[string, (i: number) => SortValue]> = [
    ['few distinct strings (grouped)', (i) => (i % 11 === 0 ? null : ['queued', 'active', 'failed'][i % 3]!)],
    ['many distinct numbers (sorted)', (i) => (i % 13 === 0 ? null : (i * 104_729) % 5000)],
  ];
  for (const [name, keyOf] of cases) {
    test(`${name}: loading in ascendingOrder equals inserting one by one, in both scan orders`, () => {
      const entries = items(3000, keyOf);
      const byId = sortById([...entries], (entry) => entry.item.id);
      const ordered = ascendingOrder(byId, (entry) => entry.key);
      const loaded = new SortedIndex<Item>(idOf, { blockCapacity: 8 });
      loaded.loadAscending(ordered.keys, ordered.items.map((entry) => entry.item));
      loaded.checkInvariants();
      const reference = incremental(entries);
      for (const order of ['asc', 'desc'] as const) {
        expect([...loaded.scan(order)].map((entry) => entry.item.id)).toEqual([...reference.scan(order)].map((entry) => entry.item.id));
      }
      expect(loaded.size).toBe(3000);
    });
  }

  test('entries out of order, or a non-empty index, are refused', () => {
    const index = new SortedIndex<Item>(idOf);
    expect(() => index.loadAscending([2, 1], [{ id: 'a' }, { id: 'b' }])).toThrow('not in ascending');
    const filled = new SortedIndex<Item>(idOf);
    filled.insert(1, { id: 'x' });
    expect(() => filled.loadAscending([2], [{ id: 'y' }])).toThrow('empty');
  });
});
