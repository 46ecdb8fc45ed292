/**
 * Puts entries into an index's ascending (key, id) order, nulls last, for
 * SortedIndex.loadAscending. Recovery rebuilds seven indexes over up to a million jobs,
 * so this avoids a comparison sort where it can: entries are first put in id order once,
 * then keys with few distinct values (state, queue, worker, task name) are grouped in
 * one pass, and only the distinct keys are sorted. Many-valued keys (times, durations)
 * take a stable sort by key, which keeps the id order among equal keys.
 */
import { compareIds, compareSortValues, type IndexEntry, type SortValue } from './sorted-index.ts';

/** `entries` must already be in ascending id order. */
export function ascendingOrder<T>(entries: IndexEntry<T>[]): IndexEntry<T>[] {
  const groups = new Map<SortValue, IndexEntry<T>[]>();
  const distinctKeysMax = Math.max(16, entries.length >> 4);
  for (const entry of entries) {
    let group = groups.get(entry.key);
    if (group === undefined) {
      if (groups.size >= distinctKeysMax) return [...entries].sort((a, b) => compareSortValues(a.key, b.key));
      group = [];
      groups.set(entry.key, group);
    }
    group.push(entry);
  }
  const ordered: IndexEntry<T>[] = [];
  for (const key of [...groups.keys()].sort(compareSortValues)) for (const entry of groups.get(key)!) ordered.push(entry);
  return ordered;
}

export function sortById<T>(items: T[], idOf: (item: T) => string): T[] {
  return items.sort((a, b) => compareIds(idOf(a), idOf(b)));
}
