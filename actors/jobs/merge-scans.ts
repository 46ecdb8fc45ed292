import { compareInOrder, type IndexEntry, type SortOrder } from './sorted-index.ts';

/**
 * One listing over several indexes (one per connection a user owns), in the listing order of
 * `order` with ties by id and nulls last, as a single index over all of them would give.
 * Each scan must already be in that order. Lazy: a page pulls about one entry per item shown
 * plus one head per scan.
 */
export function mergeScans<T>(
  scans: IterableIterator<IndexEntry<T>>[],
  order: SortOrder,
  idOf: (item: T) => string,
): IterableIterator<IndexEntry<T>> {
  if (scans.length === 1 && scans[0] !== undefined) return scans[0];
  return mergeWithHeap(scans, order, idOf);
}

interface Head<T> {
  entry: IndexEntry<T>;
  id: string;
  // Which scan it came from: the tie-break for equal (key, id), so the merge is deterministic.
  source: number;
  scan: IterableIterator<IndexEntry<T>>;
}

/** A binary min-heap of the scans' current heads: O(log k) per entry for k scans. */
function* mergeWithHeap<T>(
  scans: IterableIterator<IndexEntry<T>>[],
  order: SortOrder,
  idOf: (item: T) => string,
): Generator<IndexEntry<T>, void, undefined> {
  const before = (a: Head<T>, b: Head<T>): boolean => {
    const comparison = compareInOrder(order, a.entry.key, a.id, b.entry.key, b.id);
    return comparison < 0 || (comparison === 0 && a.source < b.source);
  };
  const heap: Head<T>[] = [];
  scans.forEach((scan, source) => {
    const first = scan.next();
    if (first.done !== true) heap.push({ entry: first.value, id: idOf(first.value.item), source, scan });
  });
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i, before);

  try {
    while (heap.length > 0) {
      const head = heap[0] as Head<T>;
      yield head.entry;
      const next = head.scan.next();
      if (next.done === true) {
        const last = heap.pop() as Head<T>;
        if (heap.length === 0) return;
        heap[0] = last;
      } else {
        head.entry = next.value;
        head.id = idOf(next.value.item);
      }
      siftDown(heap, 0, before);
    }
  } finally {
    // Stopping early (a full page) releases the scans that are still open.
    for (const head of heap) head.scan.return?.();
  }
}

function siftDown<H>(heap: H[], start: number, before: (a: H, b: H) => boolean): void {
  let parent = start;
  for (;;) {
    const left = 2 * parent + 1;
    if (left >= heap.length) return;
    const right = left + 1;
    let child = left;
    if (right < heap.length && before(heap[right] as H, heap[left] as H)) child = right;
    if (!before(heap[child] as H, heap[parent] as H)) return;
    const swap = heap[parent] as H;
    heap[parent] = heap[child] as H;
    heap[child] = swap;
    parent = child;
  }
}

export interface Page<T> {
  items: IndexEntry<T>[];
  hasMore: boolean;
}

/**
 * The first `limit` entries whose item `matches`, and whether another match follows. Pulls
 * lazily and stops at the (limit + 1)-th match, so a selective filter costs a longer walk
 * but never a full copy.
 */
export function takePage<T>(
  entries: IterableIterator<IndexEntry<T>>,
  matches: (item: T) => boolean,
  limit: number,
): Page<T> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`page limit must be a non-negative integer, got ${limit}`);
  const items: IndexEntry<T>[] = [];
  for (const entry of entries) {
    if (!matches(entry.item)) continue;
    if (items.length === limit) return { items, hasMore: true };
    items.push(entry);
  }
  return { items, hasMore: false };
}
