import { describe, expect, test } from 'bun:test';
import { mergeScans, takePage } from '../../actors/jobs/merge-scans.ts';
import { SortedIndex, type IndexEntry, type IndexPosition, type SortValue } from '../../actors/jobs/sorted-index.ts';

interface Job {
  id: string;
  connection: number;
}

const idOf = (job: Job): string => job.id;

function positions(entries: Iterable<IndexEntry<Job>>): IndexPosition[] {
  return Array.from(entries, (entry) => ({ key: entry.key, id: entry.item.id }));
}

function* entriesOf(ids: string[]): Generator<IndexEntry<Job>, void, undefined> {
  for (const id of ids) yield { key: id, item: { id, connection: 0 } };
}

/** Counts how many entries are pulled through it and whether it was closed. */
function observed<T>(inner: IterableIterator<T>): { iterator: IterableIterator<T>; pulled: () => number; closed: () => boolean } {
  let pulled = 0;
  let closed = false;
  const iterator: IterableIterator<T> = {
    next() {
      const next = inner.next();
      if (next.done !== true) pulled++;
      return next;
    },
    return(value?: unknown) {
      closed = true;
      inner.return?.(value);
      return { done: true, value: undefined };
    },
    [Symbol.iterator]() {
      return iterator;
    },
  };
  return { iterator, pulled: () => pulled, closed: () => closed };
}

type Layout = { name: string; connectionOf: (i: number) => number; keyOf: (i: number) => SortValue };

// Deterministic spreads with many ties and nulls; 7919 is prime to 1000, so ids are distinct and unordered.
const layouts: Layout[] = [
  { name: 'numbers spread over 3 connections', connectionOf: (i) => (i * 7) % 3, keyOf: (i) => (i % 11 === 0 ? null : (i * 37) % 23) },
  { name: 'strings spread unevenly', connectionOf: (i) => (i % 5 === 0 ? 0 : i % 5 < 4 ? 1 : 2), keyOf: (i) => (i % 6 === 0 ? null : ['b', 'a', 'B', 'é', ''][i % 5] ?? '') },
  { name: 'one connection empty', connectionOf: (i) => (i % 2 === 0 ? 0 : 2), keyOf: (i) => (i % 4 === 0 ? null : i % 9) },
  { name: 'everything in one connection', connectionOf: () => 1, keyOf: (i) => i % 3 },
  { name: 'only nulls', connectionOf: (i) => i % 3, keyOf: () => null },
];

function build(layout: Layout, count: number): { perConnection: SortedIndex<Job>[]; union: SortedIndex<Job> } {
  const perConnection = [0, 1, 2].map(() => new SortedIndex(idOf, { blockCapacity: 4 }));
  const union = new SortedIndex(idOf);
  for (let i = 0; i < count; i++) {
    const job = { id: `id-${String((i * 7919) % 1000).padStart(3, '0')}`, connection: layout.connectionOf(i) };
    const key = layout.keyOf(i);
    (perConnection[job.connection] as SortedIndex<Job>).insert(key, job);
    union.insert(key, job);
  }
  return { perConnection, union };
}

describe('mergeScans', () => {
  for (const layout of layouts) {
    test(`given ${layout.name}, when the three scans are merged from any position, then they equal one index over the union`, () => {
      const { perConnection, union } = build(layout, 300);
      const present = positions(union.scan('asc'));
      const starts: (IndexPosition | undefined)[] = [
        undefined,
        ...present.filter((_, i) => i % 17 === 0),
        { key: null, id: 'id-500' },
        { key: null, id: '' },
        { key: typeof present[0]?.key === 'string' ? 'b' : 4, id: 'id-absent' },
      ];
      for (const order of ['asc', 'desc'] as const) {
        for (const after of starts) {
          const merged = mergeScans(perConnection.map((index) => index.scan(order, after)), order, idOf);
          expect(positions(merged), `${order} after ${JSON.stringify(after)}`).toEqual(positions(union.scan(order, after)));
        }
      }
    });
  }

  test('given no scans, when merged, then nothing is yielded', () => {
    expect(positions(mergeScans<Job>([], 'asc', idOf))).toEqual([]);
  });

  test('given a single scan, when merged, then it comes through unchanged', () => {
    const { union } = build(layouts[0] as Layout, 50);
    expect(positions(mergeScans([union.scan('desc')], 'desc', idOf))).toEqual(positions(union.scan('desc')));
  });

  test('given the same (key, id) in two scans, when merged, then both come out, the first scan first', () => {
    const twin = (connection: number): IndexEntry<Job> => ({ key: 1, item: { id: 'same', connection } });
    const merged = [...mergeScans([[twin(0)].values(), [twin(1)].values()], 'asc', idOf)];
    expect(merged.map((entry) => entry.item.connection)).toEqual([0, 1]);
  });

  test('given a page taken from a merge, when it stops, then it pulled about one entry per item and closed the scans', () => {
    const { perConnection } = build(layouts[0] as Layout, 300);
    const sources = perConnection.map((index) => observed(index.scan('desc')));
    const page = takePage(mergeScans(sources.map((source) => source.iterator), 'desc', idOf), () => true, 10);

    expect(page.items).toHaveLength(10);
    expect(page.hasMore).toBe(true);
    const pulled = sources.reduce((sum, source) => sum + source.pulled(), 0);
    expect(pulled).toBeLessThanOrEqual(11 + sources.length);
    expect(sources.every((source) => source.closed())).toBe(true);
  });
});

describe('takePage', () => {
  const all = (): boolean => true;

  test('given exactly limit matches, when a page is taken, then all come back and there is no more', () => {
    const page = takePage(entriesOf(['a', 'b', 'c']), all, 3);
    expect(page.items.map((entry) => entry.item.id)).toEqual(['a', 'b', 'c']);
    expect(page.hasMore).toBe(false);
  });

  test('given one match more than the limit, when a page is taken, then the limit comes back and there is more', () => {
    const page = takePage(entriesOf(['a', 'b', 'c', 'd']), all, 3);
    expect(page.items.map((entry) => entry.item.id)).toEqual(['a', 'b', 'c']);
    expect(page.hasMore).toBe(true);
  });

  test('given no match, when a page is taken, then it is empty and there is no more', () => {
    expect(takePage(entriesOf(['a', 'b']), () => false, 50)).toEqual({ items: [], hasMore: false });
    expect(takePage(entriesOf([]), all, 50)).toEqual({ items: [], hasMore: false });
  });

  test('given a filter, when a page is taken, then only matches count and non-matches after the last one do not make "more"', () => {
    const isVowel = (job: Job): boolean => 'aeiou'.includes(job.id);
    const page = takePage(entriesOf(['a', 'b', 'e', 'c', 'd']), isVowel, 2);
    expect(page.items.map((entry) => entry.item.id)).toEqual(['a', 'e']);
    expect(page.hasMore).toBe(false);
    expect(takePage(entriesOf(['a', 'b', 'e', 'c', 'i']), isVowel, 2).hasMore).toBe(true);
  });

  test('given a long listing, when a page is taken, then it stops pulling at the match after the limit', () => {
    const source = observed(entriesOf(Array.from({ length: 1000 }, (_, i) => `j${i}`)));
    const everyThird = (job: Job): boolean => Number(job.id.slice(1)) % 3 === 0;
    const page = takePage(source.iterator, everyThird, 5);
    expect(page.items.map((entry) => entry.item.id)).toEqual(['j0', 'j3', 'j6', 'j9', 'j12']);
    expect(page.hasMore).toBe(true);
    expect(source.pulled()).toBe(16);
    expect(source.closed()).toBe(true);
  });

  test('given a limit of 0, when a page is taken, then no item comes back and "more" tells whether any match exists', () => {
    expect(takePage(entriesOf(['a']), all, 0)).toEqual({ items: [], hasMore: true });
    expect(takePage(entriesOf([]), all, 0)).toEqual({ items: [], hasMore: false });
  });

  test('given a negative or fractional limit, when a page is taken, then it is refused', () => {
    expect(() => takePage(entriesOf(['a']), all, -1)).toThrow('limit');
    expect(() => takePage(entriesOf(['a']), all, 1.5)).toThrow('limit');
  });
});
