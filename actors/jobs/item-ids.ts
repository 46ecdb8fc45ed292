/**
 * How an index breaks ties between items of equal key: by their ids. An index of plain
 * objects reads each item's id; the job store's items are rows whose ids sit as bytes in a
 * column (string-column.ts), and compares them in place, since making a string for every
 * comparison of every insert and lookup would cost more than the search itself.
 */
import { compareIds } from './sort-values.ts';

export interface ItemIds<T> {
  /** The item's id, for positions and cursors. */
  idOf(item: T): string;
  /** Negative, zero or positive as the item's id sorts before, with or after `id`. */
  compareTo(item: T, id: string): number;
  /** Negative, zero or positive as a's id sorts before, with or after b's. */
  compareItems(a: T, b: T): number;
}

/** An index's ids: given whole, or as the function that reads an item's id. */
export type IdsOf<T> = ItemIds<T> | ((item: T) => string);

export function itemIds<T>(ids: IdsOf<T>): ItemIds<T> {
  if (typeof ids !== 'function') return ids;
  return {
    idOf: ids,
    compareTo: (item, id) => compareIds(ids(item), id),
    compareItems: (a, b) => compareIds(ids(a), ids(b)),
  };
}
