/**
 * Puts items into an index's ascending (key, id) order, nulls last, as the parallel
 * arrays SortedIndex.loadAscending takes. Recovery rebuilds seven indexes over up to a
 * million jobs, so this avoids comparison sorts where it can: items come in id order,
 * keys with few distinct values (state, queue, worker, task name) are grouped in one
 * pass and only the distinct keys are sorted; many-valued keys (times, durations) take
 * a stable sort of positions by key, which keeps the id order among equal keys.
 */
import { compareIds, compareSortValues, type SortValue } from './sorted-index.ts';

export interface Ordered<T> {
  keys: SortValue[];
  items: T[];
}

/** `items` must already be in ascending id order. */
export function ascendingOrder<T>(items: readonly T[], keyOf: (item: T) => SortValue): Ordered<T> {
  const keys = items.map(keyOf);
  return groupedOrder(keys, items) ?? sortedOrder(keys, items);
}

function groupedOrder<T>(keys: readonly SortValue[], items: readonly T[]): Ordered<T> | null {
  const distinctKeysMax = Math.max(16, keys.length >> 4);
  const groups = new Map<SortValue, number[]>();
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as SortValue;
    let group = groups.get(key);
    if (group === undefined) {
      if (groups.size >= distinctKeysMax) return null;
      group = [];
      groups.set(key, group);
    }
    group.push(index);
  }
  const ordered: Ordered<T> = { keys: [], items: [] };
  for (const key of [...groups.keys()].sort(compareSortValues)) {
    for (const index of groups.get(key)!) {
      ordered.keys.push(key);
      ordered.items.push(items[index] as T);
    }
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
export function sortById<T>(items: T[], idOf: (item: T) => string): T[] {
  for (let index = 1; index < items.length; index++) {
    if (compareIds(idOf(items[index - 1] as T), idOf(items[index] as T)) > 0) return items.sort((a, b) => compareIds(idOf(a), idOf(b)));
  }
  return items;
}
