import { describe, expect, test } from 'bun:test';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import {
  compareInOrder,
  compareSortValues,
  SortedIndex,
  type IndexEntry,
  type IndexPosition,
  type SortOrder,
  type SortValue,
} from '../../actors/jobs/sorted-index.ts';

interface Job {
  id: string;
}

const idOf = (job: Job): string => job.id;

/** A `() => number` view of the project's seeded generator (persistence/seeded-random.ts). */
function seededRandom(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

function pick<T>(random: () => number, choices: readonly T[]): T {
  const choice = choices[Math.floor(random() * choices.length)];
  if (choice === undefined) throw new Error('pick from an empty list');
  return choice;
}

function ids(entries: Iterable<IndexEntry<Job>>): string[] {
  return Array.from(entries, (entry) => entry.item.id);
}

function positions(entries: Iterable<IndexEntry<Job>>): IndexPosition[] {
  return Array.from(entries, (entry) => ({ key: entry.key, id: entry.item.id }));
}

function take<T>(iterator: Iterator<T>, count: number): T[] {
  const taken: T[] = [];
  while (taken.length < count) {
    const next = iterator.next();
    if (next.done === true) break;
    taken.push(next.value);
  }
  return taken;
}

/**
 * The listing as the decisions state it, built without the index's comparator: keyed entries
 * sorted by key then id, null keys sorted by id after them; desc reverses each group.
 */
function referenceListing(entries: IndexPosition[], order: SortOrder): IndexPosition[] {
  const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  const byKeyThenId = (a: IndexPosition, b: IndexPosition): number => {
    const ak = a.key as number | string;
    const bk = b.key as number | string;
    return ak < bk ? -1 : ak > bk ? 1 : byCodeUnit(a.id, b.id);
  };
  const keyed = entries.filter((entry) => entry.key !== null).sort(byKeyThenId);
  const nullKeyed = entries.filter((entry) => entry.key === null).sort((a, b) => byCodeUnit(a.id, b.id));
  return order === 'asc' ? [...keyed, ...nullKeyed] : [...keyed.reverse(), ...nullKeyed.reverse()];
}

/** Entries after `after`: where `after` would sit in the listing, everything behind it. */
function referenceScan(entries: IndexPosition[], order: SortOrder, after?: IndexPosition): IndexPosition[] {
  if (after === undefined) return referenceListing(entries, order);
  const isAfter = (entry: IndexPosition): boolean => entry.key === after.key && entry.id === after.id;
  const withMarker = entries.some(isAfter) ? entries : [...entries, after];
  const listing = referenceListing(withMarker, order);
  return listing.slice(listing.findIndex(isAfter) + 1);
}

describe('compareSortValues', () => {
  test('given numbers, when compared, then they order numerically', () => {
    expect(compareSortValues(2, 10)).toBeLessThan(0);
    expect(compareSortValues(-1.5, -2)).toBeGreaterThan(0);
    expect(compareSortValues(7, 7)).toBe(0);
  });

  test('given strings, when compared, then they order by UTF-16 code unit, not by locale', () => {
    expect(compareSortValues('B', 'a')).toBeLessThan(0);
    expect(compareSortValues('z', 'é')).toBeLessThan(0);
    expect(compareSortValues('\uffff', '\u{1F600}')).toBeGreaterThan(0);
    expect(compareSortValues('ab', 'abc')).toBeLessThan(0);
  });

  test('given null, when compared with anything, then null sorts after it', () => {
    expect(compareSortValues(null, 5)).toBeGreaterThan(0);
    expect(compareSortValues('zzz', null)).toBeLessThan(0);
    expect(compareSortValues(null, null)).toBe(0);
  });

  test('given a number and a string (a forged cursor), when compared, then the order is still total', () => {
    expect(compareSortValues(1e9, '0')).toBeLessThan(0);
    expect(compareSortValues('0', 1e9)).toBeGreaterThan(0);
  });
});

describe('compareInOrder', () => {
  test('given nulls, when compared in either order, then nulls come last', () => {
    for (const order of ['asc', 'desc'] as const) {
      expect(compareInOrder(order, null, 'a', 5, 'b')).toBeGreaterThan(0);
      expect(compareInOrder(order, 5, 'b', null, 'a')).toBeLessThan(0);
    }
  });

  test('given equal keys, when compared, then the id decides in the direction of the order', () => {
    expect(compareInOrder('asc', 1, 'a', 1, 'b')).toBeLessThan(0);
    expect(compareInOrder('desc', 1, 'a', 1, 'b')).toBeGreaterThan(0);
    expect(compareInOrder('asc', null, 'a', null, 'b')).toBeLessThan(0);
    expect(compareInOrder('desc', null, 'a', null, 'b')).toBeGreaterThan(0);
  });
});

describe('SortedIndex listing order', () => {
  function sampleIndex(): SortedIndex<Job> {
    const index = new SortedIndex(idOf, { blockCapacity: 4 });
    const rows: [SortValue, string][] = [
      [30, 'c'], [null, 'n2'], [10, 'b'], [20, 'a'], [null, 'n1'], [10, 'a'], [30, 'a'], [null, 'n3'], [20, 'z'],
    ];
    for (const [key, id] of rows) index.insert(key, { id });
    return index;
  }

  test('given keys with ties and nulls, when scanned asc, then keys ascend, ties by id ascending, nulls last', () => {
    expect(ids(sampleIndex().scan('asc'))).toEqual(['a', 'b', 'a', 'z', 'a', 'c', 'n1', 'n2', 'n3']);
  });

  test('given keys with ties and nulls, when scanned desc, then keys descend, ties by id descending, nulls last', () => {
    expect(ids(sampleIndex().scan('desc'))).toEqual(['c', 'a', 'z', 'a', 'b', 'a', 'n3', 'n2', 'n1']);
  });

  test('given a position with a null key, when scanned, then it resumes inside the nulls', () => {
    const index = sampleIndex();
    expect(ids(index.scan('asc', { key: null, id: 'n1' }))).toEqual(['n2', 'n3']);
    expect(ids(index.scan('desc', { key: null, id: 'n3' }))).toEqual(['n2', 'n1']);
    expect(ids(index.scan('desc', { key: null, id: 'n1' }))).toEqual([]);
  });

  test('given the entry at the position was removed, when scanned, then it resumes where that entry was', () => {
    const index = sampleIndex();
    expect(index.remove(20, { id: 'a' })).toBe(true);
    expect(ids(index.scan('asc', { key: 20, id: 'a' }))).toEqual(['z', 'a', 'c', 'n1', 'n2', 'n3']);
    expect(ids(index.scan('desc', { key: 20, id: 'a' }))).toEqual(['b', 'a', 'n3', 'n2', 'n1']);
  });

  test('given a position past the last keyed entry, when scanned, then only the nulls remain', () => {
    const index = sampleIndex();
    expect(ids(index.scan('asc', { key: 99, id: '' }))).toEqual(['n1', 'n2', 'n3']);
    expect(ids(index.scan('desc', { key: -1, id: '' }))).toEqual(['n3', 'n2', 'n1']);
  });

  test('given an empty index, when scanned from anywhere, then nothing is yielded', () => {
    const index = new SortedIndex(idOf);
    for (const order of ['asc', 'desc'] as const) {
      expect(ids(index.scan(order))).toEqual([]);
      expect(ids(index.scan(order, { key: 3, id: 'x' }))).toEqual([]);
      expect(ids(index.scan(order, { key: null, id: 'x' }))).toEqual([]);
    }
  });

  test('given a NaN key, when inserted, then it is refused', () => {
    expect(() => new SortedIndex(idOf).insert(Number.NaN, { id: 'a' })).toThrow('NaN');
  });

  test('given a block capacity below 4, when constructed, then it is refused', () => {
    expect(() => new SortedIndex(idOf, { blockCapacity: 3 })).toThrow('blockCapacity');
  });

  test('given an index of one key, when filled, emptied and loaded, then scans yield that key, and another key is refused', () => {
    const index = new SortedIndex(idOf, { blockCapacity: 4, onlyKey: 'failed' });
    const jobs = Array.from({ length: 40 }, (_, i) => ({ id: `j${String((i * 17) % 40).padStart(2, '0')}` }));
    for (const job of jobs) index.insert('failed', job);
    for (const job of jobs.slice(0, 25)) expect(index.remove('failed', job)).toBe(true);
    index.checkInvariants();
    const scanned = [...index.scan('asc')];
    expect(scanned.map((entry) => entry.key)).toEqual(Array(15).fill('failed'));
    expect(scanned.map((entry) => entry.item.id)).toEqual(jobs.slice(25).map(idOf).sort());
    expect(ids(index.scan('desc', { key: 'failed', id: scanned[3]!.item.id }))).toEqual(scanned.slice(0, 3).map((entry) => entry.item.id).reverse());
    expect(() => index.insert('queued', { id: 'x' })).toThrow('cannot take key queued');
    expect(() => index.insert(null, { id: 'x' })).not.toThrow();
    const loaded = new SortedIndex(idOf, { blockCapacity: 4, onlyKey: 7 });
    expect(() => loaded.loadAscending([7, 8], [{ id: 'a' }, { id: 'b' }])).toThrow('cannot take key 8');
  });
});

describe('SortedIndex against a reference model', () => {
  type KeyKind = 'number' | 'string';

  function randomKey(random: () => number, kind: KeyKind): SortValue {
    if (random() < 0.15) return null;
    // Few distinct keys, so that ties (and the id tie-break) are common.
    if (kind === 'number') return random() < 0.1 ? (random() - 0.5) * 1e12 : Math.floor(random() * 25) - 5;
    let key = '';
    const length = Math.floor(random() * 3);
    for (let i = 0; i < length; i++) key += pick(random, ['a', 'B', 'b', 'é', '\u{1F600}', ' ']);
    return key;
  }

  function randomId(random: () => number): string {
    return Math.floor(random() * 400).toString(36).padStart(2, '0');
  }

  function runRandomOperations(seed: number, blockCapacity: number, kind: KeyKind, steps: number): void {
    const random = seededRandom(seed);
    const index = new SortedIndex(idOf, { blockCapacity });
    const present = new Map<string, { job: Job; key: SortValue }>();
    const gone: IndexPosition[] = [];
    const model = (): IndexPosition[] => Array.from(present.values(), ({ job, key }) => ({ key, id: job.id }));
    const randomPresent = (): { job: Job; key: SortValue } | undefined =>
      present.size === 0 ? undefined : pick(random, Array.from(present.values()));
    const context = (step: number): string => `seed ${seed}, capacity ${blockCapacity}, ${kind} keys, step ${step}`;

    for (let step = 0; step < steps; step++) {
      const roll = random();
      if (roll < 0.4) {
        const id = randomId(random);
        if (present.has(id)) continue;
        const key = randomKey(random, kind);
        const job = { id };
        index.insert(key, job);
        present.set(id, { job, key });
      } else if (roll < 0.6) {
        const victim = randomPresent();
        if (victim === undefined) continue;
        expect(index.remove(victim.key, victim.job), context(step)).toBe(true);
        present.delete(victim.job.id);
        gone.push({ key: victim.key, id: victim.job.id });
      } else if (roll < 0.68) {
        // A key the item does not have, or an item that is not there.
        const victim = randomPresent();
        const key = randomKey(random, kind);
        if (victim !== undefined && key !== victim.key) expect(index.remove(key, victim.job), context(step)).toBe(false);
        const stranger = { id: `absent-${step}` };
        expect(index.remove(key, stranger), context(step)).toBe(false);
      } else if (roll < 0.82) {
        const moved = randomPresent();
        if (moved === undefined) continue;
        const key = randomKey(random, kind);
        expect(index.remove(moved.key, moved.job), context(step)).toBe(true);
        index.insert(key, moved.job);
        gone.push({ key: moved.key, id: moved.job.id });
        moved.key = key;
      } else {
        const order = pick(random, ['asc', 'desc'] as const);
        const from = random();
        let after: IndexPosition | undefined;
        if (from < 0.15) after = undefined;
        else if (from < 0.45) after = positions([...index.scan('asc')])[Math.floor(random() * index.size)];
        else if (from < 0.65) after = gone.length === 0 ? undefined : pick(random, gone);
        else if (from < 0.8) after = { key: null, id: randomId(random) };
        else after = { key: randomKey(random, kind), id: randomId(random) };

        const expected = referenceScan(model(), order, after);
        const limit = random() < 0.3 ? Number.POSITIVE_INFINITY : 1 + Math.floor(random() * 60);
        const actual = positions(take(index.scan(order, after), limit));
        expect(actual, `${context(step)}, ${order} after ${JSON.stringify(after)}`).toEqual(
          expected.slice(0, Math.min(limit, expected.length)),
        );
        // a filtered scan yields what filtering the scan would
        const idMatches = (job: Job): boolean => job.id.charCodeAt(job.id.length - 1) % 3 === 0;
        const expectedMatching = expected.filter((position) => idMatches({ id: position.id }));
        const actualMatching = positions(take(index.scan(order, after, idMatches), limit));
        expect(actualMatching, `${context(step)}, filtered, ${order} after ${JSON.stringify(after)}`).toEqual(
          expectedMatching.slice(0, Math.min(limit, expectedMatching.length)),
        );
      }
      if (step % 25 === 0) {
        index.checkInvariants();
        expect(index.size, context(step)).toBe(present.size);
      }
    }
    index.checkInvariants();
    expect(positions(index.scan('asc'))).toEqual(referenceListing(model(), 'asc'));
    expect(positions(index.scan('desc'))).toEqual(referenceListing(model(), 'desc'));
  }

  for (const kind of ['number', 'string'] as const) {
    for (const blockCapacity of [4, 5, 8, 64]) {
      test(`given random inserts, removes and key changes over ${kind} keys in blocks of ${blockCapacity}, when scanned from random positions, then every scan matches the model`, () => {
        for (let seed = 1; seed <= 12; seed++) runRandomOperations(seed * 7919 + blockCapacity, blockCapacity, kind, 1500);
      });
    }
  }
});

describe('SortedIndex live scans', () => {
  test('given a scan in progress, when entries around it are inserted and removed, then it resumes after the last entry it yielded', () => {
    for (const order of ['asc', 'desc'] as const) {
      const index = new SortedIndex(idOf, { blockCapacity: 4 });
      const jobs = new Map<string, Job>();
      for (let i = 0; i < 40; i++) {
        const job = { id: `j${String(i).padStart(2, '0')}` };
        jobs.set(job.id, job);
        index.insert(i % 7 === 0 ? null : i, job);
      }
      const scan = index.scan(order);
      const firstPart = take(scan, 10);
      const lastYielded = firstPart[firstPart.length - 1] as IndexEntry<Job>;

      // Remove the entry the scan stands on and several others, and add new ones on both sides.
      index.remove(lastYielded.key, lastYielded.item);
      for (const i of [1, 2, 3, 20, 21, 22, 23, 24, 25]) index.remove(i % 7 === 0 ? null : i, jobs.get(`j${String(i).padStart(2, '0')}`) as Job);
      for (const key of [0.5, 15.5, 38.5, null]) index.insert(key, { id: `new-${String(key)}` });

      const rest = ids(scan);
      const expected = ids(index.scan(order, { key: lastYielded.key, id: lastYielded.item.id }));
      expect(rest).toEqual(expected);
      index.checkInvariants();
    }
  });

  test('given a filtered scan in progress, when the index changes, then it resumes without repeating or losing a match', () => {
    for (const order of ['asc', 'desc'] as const) {
      const index = new SortedIndex(idOf, { blockCapacity: 4 });
      const even = (job: Job): boolean => Number(job.id.slice(1)) % 2 === 0;
      for (let i = 0; i < 40; i++) index.insert(i, { id: `j${String(i).padStart(2, '0')}` });
      const scan = index.scan(order, undefined, even);
      const firstPart = take(scan, 5);
      expect(firstPart.every((entry) => even(entry.item))).toBe(true);
      // the scan stands on the 5th match; the odd entry after it was passed on the way to the next one only once it is pulled
      index.insert(order === 'asc' ? 100 : -100, { id: 'j98' });
      index.remove(order === 'asc' ? 20 : 19, { id: order === 'asc' ? 'j20' : 'j19' });
      const rest = take(scan, 100).map((entry) => entry.item.id);
      const all = [...firstPart.map((entry) => entry.item.id), ...rest];
      expect(new Set(all).size).toBe(all.length);
      const expected = ids(index.scan(order)).filter((id) => even({ id }));
      expect(all).toEqual(expected);
      index.checkInvariants();
    }
  });

  test('given a scan that has not started, when the index changes, then it starts from its original position', () => {
    const index = new SortedIndex(idOf, { blockCapacity: 4 });
    for (let i = 0; i < 20; i++) index.insert(i, { id: `j${i}` });
    const scan = index.scan('asc', { key: 9, id: 'j9' });
    index.insert(9.5, { id: 'late' });
    index.remove(10, { id: 'j10' });
    expect(take(scan, 3).map((entry) => entry.item.id)).toEqual(['late', 'j11', 'j12']);
  });
});

describe('SortedIndex block layout', () => {
  test('given keys arriving in order, when inserted, then every block but the last is full', () => {
    const index = new SortedIndex(idOf, { blockCapacity: 8 });
    for (let i = 0; i < 1000; i++) index.insert(i, { id: `j${i}` });
    index.checkInvariants();
    const sizes = index.blockSizes().keyed;
    expect(sizes.length).toBe(Math.ceil(1000 / 8));
    expect(sizes.slice(0, -1).every((size) => size === 8)).toBe(true);
  });

  test('given equal keys with ids arriving in order (a state index with time-ordered ids), when inserted, then blocks stay full', () => {
    const index = new SortedIndex(idOf, { blockCapacity: 8 });
    // Existing jobs in three states, then new jobs all entering the middle state.
    for (let i = 0; i < 40; i++) index.insert(pick(seededRandom(i), ['active', 'queued', 'retrying']), { id: `a${String(i).padStart(4, '0')}` });
    for (let i = 0; i < 800; i++) index.insert('queued', { id: `b${String(i).padStart(4, '0')}` });
    index.checkInvariants();
    const sizes = index.blockSizes().keyed;
    const occupancy = index.size / (sizes.length * 8);
    expect(occupancy).toBeGreaterThan(0.9);
  });

  test('given timestamps arriving slightly out of order, when inserted, then blocks stay nearly full', () => {
    const random = seededRandom(42);
    const index = new SortedIndex(idOf, { blockCapacity: 64 });
    const entries: IndexPosition[] = [];
    for (let i = 0; i < 20_000; i++) {
      const key = 1_700_000_000_000 + i * 10 - Math.floor(random() * 500);
      const id = `j${i}`;
      index.insert(key, { id });
      entries.push({ key, id });
    }
    index.checkInvariants();
    expect(positions(index.scan('desc'))).toEqual(referenceListing(entries, 'desc'));
    const sizes = index.blockSizes().keyed;
    expect(index.size / (sizes.length * 64)).toBeGreaterThan(0.9);
  });

  test('given full blocks far from the end, when keys land among them, then entries spill to neighbours and blocks split when none is near', () => {
    const random = seededRandom(11);
    const index = new SortedIndex(idOf, { blockCapacity: 8 });
    const entries: IndexPosition[] = [];
    for (let i = 0; i < 800; i++) {
      index.insert(i, { id: `j${i}` });
      entries.push({ key: i, id: `j${i}` });
    }
    const blocksBefore = index.blockSizes().keyed.length;
    for (let n = 0; n < 400; n++) {
      const key = 100 + Math.floor(random() * 400) + 0.5;
      const id = `m${n}`;
      index.insert(key, { id });
      entries.push({ key, id });
    }
    index.checkInvariants();
    expect(index.blockSizes().keyed.length).toBeGreaterThan(blocksBefore + 400 / 8);
    expect(positions(index.scan('asc'))).toEqual(referenceListing(entries, 'asc'));
  });

  test('given a full index, when most entries are removed at random, then small neighbours merge and the rest stays ordered', () => {
    const random = seededRandom(7);
    const index = new SortedIndex(idOf, { blockCapacity: 16 });
    const jobs: { key: SortValue; job: Job }[] = [];
    for (let i = 0; i < 2000; i++) {
      const entry = { key: Math.floor(random() * 100), job: { id: `j${i}` } };
      index.insert(entry.key, entry.job);
      jobs.push(entry);
    }
    const blocksWhenFull = index.blockSizes().keyed.length;
    const survivors = jobs.filter((entry) => {
      if (random() < 0.9) {
        expect(index.remove(entry.key, entry.job)).toBe(true);
        return false;
      }
      return true;
    });
    index.checkInvariants();
    expect(index.blockSizes().keyed.length).toBeLessThan(blocksWhenFull / 3);
    expect(positions(index.scan('asc'))).toEqual(referenceListing(survivors.map(({ key, job }) => ({ key, id: job.id })), 'asc'));
  });

  test('given an index, when every entry is removed, then no block is left and it is usable again', () => {
    const index = new SortedIndex(idOf, { blockCapacity: 4 });
    const jobs = Array.from({ length: 50 }, (_, i) => ({ key: i % 5 === 0 ? null : i, job: { id: `j${i}` } }));
    for (const { key, job } of jobs) index.insert(key, job);
    for (const { key, job } of jobs.reverse()) expect(index.remove(key, job)).toBe(true);
    expect(index.size).toBe(0);
    expect(index.blockSizes()).toEqual({ keyed: [], nullKeyed: [] });
    index.insert(1, { id: 'again' });
    expect(ids(index.scan('desc'))).toEqual(['again']);
  });

  test('given a few entries, when inserted, then the index holds small arrays, and they grow up to the capacity', () => {
    const index = new SortedIndex(idOf);
    for (let i = 0; i < 3; i++) index.insert(i, { id: `j${i}` });
    index.insert(null, { id: 'n' });
    expect(index.allocatedSlots).toBe(16);

    for (let i = 3; i < 1000; i++) index.insert(i, { id: `j${i}` });
    index.checkInvariants();
    expect(index.blockSizes().keyed).toEqual([500, 500]);
    expect(index.allocatedSlots).toBe(1000 + 8);
  });

  test('given an index, when cleared, then it is empty', () => {
    const index = new SortedIndex(idOf);
    index.insert(1, { id: 'a' });
    index.insert(null, { id: 'b' });
    index.clear();
    expect(index.size).toBe(0);
    expect(ids(index.scan('asc'))).toEqual([]);
  });
});
