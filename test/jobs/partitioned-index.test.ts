import { describe, expect, test } from 'bun:test';
import { PartitionedIndex } from '../../actors/jobs/partitioned-index.ts';
import { SortedIndex, type IndexPosition, type SortValue } from '../../actors/jobs/sorted-index.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

interface Item {
  id: string;
}
const idOf = (item: Item) => item.id;
const KEYS: SortValue[] = ['active', 'completed', 'failed', 'queued', null];

describe('PartitionedIndex lists exactly like a single SortedIndex', () => {
  for (let seed = 1; seed <= 25; seed++) {
    test(`seed ${seed}: random inserts, key changes and removes; scans from random positions in both orders`, () => {
      const random = new SeededRandom(seed);
      const partitioned = new PartitionedIndex<Item>(idOf, { blockCapacity: 4 });
      const reference = new SortedIndex<Item>(idOf, { blockCapacity: 4 });
      const live = new Map<Item, SortValue>();
      let nextId = 0;
      for (let step = 0; step < 400; step++) {
        const roll = random.next();
        const items = [...live.keys()];
        if (roll < 0.5 || items.length === 0) {
          const item = { id: `id-${String(nextId++).padStart(5, '0')}` };
          const key = KEYS[random.int(KEYS.length)]!;
          partitioned.insert(key, item);
          reference.insert(key, item);
          live.set(item, key);
        } else {
          const item = items[random.int(items.length)]!;
          const key = live.get(item)!;
          expect(partitioned.remove(key, item)).toBe(true);
          reference.remove(key, item);
          live.delete(item);
          if (roll < 0.8) {
            const newKey = KEYS[random.int(KEYS.length)]!;
            partitioned.insert(newKey, item);
            reference.insert(newKey, item);
            live.set(item, newKey);
          }
        }
      }
      partitioned.checkInvariants();
      expect(partitioned.size).toBe(reference.size);
      const positions: (IndexPosition | undefined)[] = [undefined, { key: 'b', id: 'id-00010' }, { key: null, id: 'id-00003' }, { key: 'zzz', id: '' }];
      for (const item of [...live.keys()].slice(0, 10)) positions.push({ key: live.get(item)!, id: item.id });
      for (const order of ['asc', 'desc'] as const) {
        for (const after of positions) {
          const ids = (index: { scan: SortedIndex<Item>['scan'] }) => [...index.scan(order, after)].map((entry) => entry.item.id);
          expect(ids(partitioned)).toEqual(ids(reference));
          const odd = (item: Item): boolean => item.id.endsWith('1') || item.id.endsWith('3') || item.id.endsWith('7');
          const matching = (index: { scan: SortedIndex<Item>['scan'] }) => [...index.scan(order, after, odd)].map((entry) => entry.item.id);
          expect(matching(partitioned)).toEqual(ids(reference).filter((id) => odd({ id })));
        }
      }
    });
  }

  test('loadAscending builds the same listing', () => {
    const keys: SortValue[] = ['a', 'a', 'b', 'c', 'c', 'c', null, null];
    const items = keys.map((_, i) => ({ id: `id-${i}` }));
    const index = new PartitionedIndex<Item>(idOf);
    index.loadAscending(keys, items);
    expect([...index.scan('desc')].map((entry) => entry.item.id)).toEqual(['id-5', 'id-4', 'id-3', 'id-2', 'id-1', 'id-0', 'id-7', 'id-6']);
    index.checkInvariants();
  });
});
