import { describe, expect, test } from 'bun:test';
import { GroupedIndex } from '../../actors/jobs/grouped-index.ts';
import { SortedIndex, type IndexPosition, type SortValue } from '../../actors/jobs/sorted-index.ts';
import { ascendingOrder } from '../../actors/jobs/ascending-order.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

interface Item {
  id: string;
}
const idOf = (item: Item) => item.id;
const GROUPS = ['queued', 'active', 'completed', 'failed'] as const;
type Group = (typeof GROUPS)[number];
const KEYS: SortValue[] = [1, 2, 2, 3, 5, 8, null];

describe('GroupedIndex lists exactly like a single SortedIndex, whole or by group', () => {
  for (let seed = 1; seed <= 25; seed++) {
    test(`seed ${seed}: random inserts, group and key changes, removes; scans from random positions in both orders`, () => {
      const random = new SeededRandom(seed);
      const grouped = new GroupedIndex<Item, Group>(idOf, { blockCapacity: 4 });
      const reference = new SortedIndex<Item>(idOf, { blockCapacity: 4 });
      const live = new Map<Item, { group: Group; key: SortValue }>();
      let nextId = 0;
      const place = (item: Item) => {
        const entry = { group: GROUPS[random.int(GROUPS.length)]!, key: KEYS[random.int(KEYS.length)]! };
        grouped.insert(entry.group, entry.key, item);
        reference.insert(entry.key, item);
        live.set(item, entry);
      };
      for (let step = 0; step < 400; step++) {
        const roll = random.next();
        const items = [...live.keys()];
        if (roll < 0.5 || items.length === 0) {
          place({ id: `id-${String(nextId++).padStart(5, '0')}` });
        } else {
          const item = items[random.int(items.length)]!;
          const { group, key } = live.get(item)!;
          const otherGroup = GROUPS.find((candidate) => candidate !== group)!;
          expect(grouped.remove(otherGroup, key, item)).toBe(false); // the group it was inserted with, not another
          expect(grouped.remove(group, key, item)).toBe(true);
          reference.remove(key, item);
          live.delete(item);
          if (roll < 0.8) place(item);
        }
      }
      grouped.checkInvariants();
      expect(grouped.size).toBe(reference.size);
      expect(new Set(grouped.groups)).toEqual(new Set([...live.values()].map((entry) => entry.group)));
      const positions: (IndexPosition | undefined)[] = [undefined, { key: 2, id: 'id-00010' }, { key: null, id: 'id-00003' }, { key: 99, id: '' }];
      for (const item of [...live.keys()].slice(0, 10)) positions.push({ key: live.get(item)!.key, id: item.id });
      const odd = (item: Item): boolean => /[137]$/.test(item.id);
      for (const order of ['asc', 'desc'] as const) {
        for (const after of positions) {
          const expected = [...reference.scan(order, after)].map((entry) => entry.item.id);
          expect([...grouped.scan(order, after)].map((entry) => entry.item.id)).toEqual(expected);
          expect([...grouped.scan(order, after, odd)].map((entry) => entry.item.id)).toEqual(expected.filter((id) => odd({ id })));
          const finished = new Set<Group>(['completed', 'failed']);
          const inFinished = (id: string) => [...live].some(([item, entry]) => item.id === id && finished.has(entry.group));
          expect([...grouped.scanGroups(finished, order, after)].map((entry) => entry.item.id)).toEqual(expected.filter(inFinished));
        }
      }
    });
  }

  test('loadAscending splits an ordered list into its groups and lists it back the same', () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ id: `id-${String(i).padStart(3, '0')}` }));
    const keyOf = (item: Item): SortValue => (Number(item.id.slice(3)) % 7 === 0 ? null : Number(item.id.slice(3)) % 5);
    const groupOf = (item: Item): Group => GROUPS[Number(item.id.slice(3)) % 3]!;
    const ordered = ascendingOrder(items, keyOf);
    const grouped = new GroupedIndex<Item, Group>(idOf, { blockCapacity: 4 });
    grouped.loadAscending(ordered.keys, ordered.items, groupOf);
    grouped.checkInvariants();
    expect(grouped.size).toBe(40);
    expect(new Set(grouped.groups)).toEqual(new Set(['queued', 'active', 'completed']));
    const reference = new SortedIndex<Item>(idOf);
    reference.loadAscending(ordered.keys, ordered.items);
    for (const order of ['asc', 'desc'] as const) {
      expect([...grouped.scan(order)].map((entry) => entry.item.id)).toEqual([...reference.scan(order)].map((entry) => entry.item.id));
      expect([...grouped.scanGroups(['active'], order)].map((entry) => entry.item.id)).toEqual(
        [...reference.scan(order)].map((entry) => entry.item).filter((item) => groupOf(item) === 'active').map(idOf),
      );
    }
    expect(() => grouped.loadAscending([1], [{ id: 'x' }], groupOf)).toThrow('empty');
    expect(() => new GroupedIndex<Item, Group>(idOf).loadAscending([1, 2], [{ id: 'x' }], groupOf)).toThrow('one item per key');
  });

  test('a group emptied by removals is dropped, and scanning a group with no entries yields nothing', () => {
    const grouped = new GroupedIndex<Item, Group>(idOf);
    const item = { id: 'a' };
    grouped.insert('failed', 3, item);
    expect(grouped.groups).toEqual(['failed']);
    expect(grouped.remove('failed', 3, item)).toBe(true);
    expect(grouped.groups).toEqual([]);
    expect(grouped.size).toBe(0);
    expect([...grouped.scanGroups(['failed', 'queued'], 'asc')]).toEqual([]);
    expect(grouped.remove('failed', 3, item)).toBe(false);
  });
});
