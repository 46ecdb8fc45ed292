import { describe, expect, test } from 'bun:test';
import { ascendingOrder, sortById, stableOrderOfNumbers } from '../../actors/jobs/ascending-order.ts';
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
    ['numbers of every sign and size, ties, -0 beside 0', (i) => (i % 17 === 0 ? null : [-0, 0, -1.5, 1e15, -1e15, Infinity, -Infinity, 3.25, 1_763_900_000_000 + (i % 50), -7][i % 10]!)],
    ['timestamps a few ms apart (radix passes skipped for equal digits)', (i) => 1_763_900_000_000 + ((i * 7) % 3000)],
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

  test('stableOrderOfNumbers equals a stable comparison sort of positions, for values across the whole double range', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    const pool = [0, 1, -1, 0.5, -0.5, 2 ** 52, -(2 ** 52), 1e-300, -1e-300, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity];
    // near ±1: values that differ only in the low half of their bits
    const near = (sign: number) => sign * (1 + random() * 1e-9);
    const values = Array.from({ length: 5000 }, (_, i) =>
      i % 4 === 0 ? pool[Math.floor(random() * pool.length)]! : i % 4 === 1 ? near(random() < 0.5 ? 1 : -1) : (random() - 0.5) * 10 ** Math.floor(random() * 30),
    );
    const expected = values.map((_, index) => index).sort((a, b) => values[a]! - values[b]! || a - b);
    expect([...stableOrderOfNumbers(Float64Array.from(values))]).toEqual(expected);
    expect([...stableOrderOfNumbers(new Float64Array(0))]).toEqual([]);
  });

  test('entries out of order, or a non-empty index, are refused', () => {
    const index = new SortedIndex<Item>(idOf);
    expect(() => index.loadAscending([2, 1], [{ id: 'a' }, { id: 'b' }])).toThrow('not in ascending');
    const filled = new SortedIndex<Item>(idOf);
    filled.insert(1, { id: 'x' });
    expect(() => filled.loadAscending([2], [{ id: 'y' }])).toThrow('empty');
  });
});
