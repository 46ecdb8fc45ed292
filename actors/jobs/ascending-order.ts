/**
 * Puts items into an index's ascending (key, id) order, nulls last, as the parallel
 * arrays SortedIndex.loadAscending takes. Recovery rebuilds seven indexes over up to a
 * million jobs, so this avoids comparison sorts where it can: items come in id order,
 * keys with few distinct values (state, queue, worker, task name) are grouped in one
 * pass and only the distinct keys are sorted; number keys (times, durations) take a
 * stable radix sort, which keeps the id order among equal keys (a comparison sort of a
 * million positions was most of a restart); anything else a stable comparison sort.
 */
import { itemIds, type IdsOf } from './item-ids.ts';
import { compareSortValues, type SortValue } from './sorted-index.ts';

export interface Ordered<T> {
  keys: SortValue[];
  items: T[];
}

/** `items` must already be in ascending id order. */
export function ascendingOrder<T>(items: readonly T[], keyOf: (item: T) => SortValue): Ordered<T> {
  const keys = items.map(keyOf);
  return numberOrder(keys, items) ?? groupedOrder(keys, items) ?? sortedOrder(keys, items);
}

/** Null when a key is a string. */
function numberOrder<T>(keys: readonly SortValue[], items: readonly T[]): Ordered<T> | null {
  let numbered = 0;
  for (const key of keys) {
    if (typeof key === 'string') return null;
    if (key !== null) numbered++;
  }
  const values = new Float64Array(numbered);
  const positions = new Uint32Array(numbered);
  const nullPositions: number[] = [];
  for (let index = 0, at = 0; index < keys.length; index++) {
    const key = keys[index] as number | null;
    if (key === null) {
      nullPositions.push(index);
      continue;
    }
    // + 0 turns -0 into 0: the two are equal keys (compareSortValues), whose order is by id.
    values[at] = key + 0;
    positions[at++] = index;
  }
  const ordered: Ordered<T> = { keys: new Array<SortValue>(keys.length), items: new Array<T>(keys.length) };
  const order = stableOrderOfNumbers(values);
  for (let at = 0; at < numbered; at++) {
    const index = positions[order[at]!]!;
    ordered.keys[at] = keys[index] as number;
    ordered.items[at] = items[index] as T;
  }
  for (let at = numbered; at < keys.length; at++) {
    ordered.keys[at] = null;
    ordered.items[at] = items[nullPositions[at - numbered]!] as T;
  }
  return ordered;
}

const DIGIT_BITS = 16;
const DIGIT_MASK = (1 << DIGIT_BITS) - 1;

/**
 * Positions of `values` in ascending order, equal values in position order: an LSD radix
 * sort over the four 16-bit digits of each double's bits, made order-preserving (flip the
 * sign bit of positives, every bit of negatives). A digit that is the same for every value
 * (the high digits of timestamps) costs one counting pass and no move. Overwrites `values`.
 */
export function stableOrderOfNumbers(values: Float64Array): Uint32Array {
  const count = values.length;
  // Bun runs on little-endian machines only: word 2i is the low half of value i.
  const words = new Uint32Array(values.buffer, values.byteOffset, count * 2);
  for (let i = 0; i < count; i++) {
    const high = words[2 * i + 1]!;
    if (high >>> 31 === 1) {
      words[2 * i] = ~words[2 * i]! >>> 0;
      words[2 * i + 1] = ~high >>> 0;
    } else {
      words[2 * i + 1] = (high | 0x80000000) >>> 0;
    }
  }
  let order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  let next = new Uint32Array(count);
  const starts = new Uint32Array(DIGIT_MASK + 2);
  for (let digit = 0; digit < 4; digit++) {
    const word = digit >> 1;
    const shift = (digit & 1) * DIGIT_BITS;
    starts.fill(0);
    for (let i = 0; i < count; i++) starts[((words[2 * i + word]! >>> shift) & DIGIT_MASK) + 1]!++;
    if (count === 0 || starts[((words[word]! >>> shift) & DIGIT_MASK) + 1] === count) continue;
    for (let d = 1; d < starts.length; d++) starts[d]! += starts[d - 1]!;
    for (let j = 0; j < count; j++) {
      const i = order[j]!;
      next[starts[(words[2 * i + word]! >>> shift) & DIGIT_MASK]!++] = i;
    }
    [order, next] = [next, order];
  }
  return order;
}

/** A counting sort by distinct key; null when there are too many distinct keys for it to pay. */
function groupedOrder<T>(keys: readonly SortValue[], items: readonly T[]): Ordered<T> | null {
  const distinctKeysMax = Math.max(16, keys.length >> 4);
  const groupOf = new Map<SortValue, number>();
  const groupCodes = new Int32Array(keys.length);
  const sizes: number[] = [];
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as SortValue;
    let group = groupOf.get(key);
    if (group === undefined) {
      if (groupOf.size >= distinctKeysMax) return null;
      group = groupOf.size;
      groupOf.set(key, group);
      sizes.push(0);
    }
    groupCodes[index] = group;
    sizes[group]!++;
  }
  // Where each group starts in the output, groups in key order.
  const starts = new Array<number>(sizes.length);
  let at = 0;
  for (const key of [...groupOf.keys()].sort(compareSortValues)) {
    const group = groupOf.get(key)!;
    starts[group] = at;
    at += sizes[group]!;
  }
  const groupKeys = [...groupOf.keys()];
  const ordered: Ordered<T> = { keys: new Array<SortValue>(keys.length), items: new Array<T>(keys.length) };
  for (let index = 0; index < keys.length; index++) {
    const group = groupCodes[index]!;
    const to = starts[group]!++;
    ordered.keys[to] = groupKeys[group] as SortValue;
    ordered.items[to] = items[index] as T;
  }
  return ordered;
}

function sortedOrder<T>(keys: readonly SortValue[], items: readonly T[]): Ordered<T> {
  const positions = Array.from({ length: keys.length }, (_, index) => index);
  // Stable: equal keys keep their id order.
  positions.sort((a, b) => compareSortValues(keys[a] as SortValue, keys[b] as SortValue));
  return { keys: positions.map((index) => keys[index] as SortValue), items: positions.map((index) => items[index] as T) };
}

/** Sorts by id unless already in order (recovery hands jobs over nearly always in id order). */
export function sortById<T>(items: T[], ids: IdsOf<T>): T[] {
  const { compareItems } = itemIds(ids);
  for (let index = 1; index < items.length; index++) {
    if (compareItems(items[index - 1] as T, items[index] as T) > 0) return items.sort(compareItems);
  }
  return items;
}
