/** Sort keys and the orders of the job lists: ascending by key then id, nulls last in both orders. */
export type SortValue = number | string | null;
export type SortOrder = 'asc' | 'desc';

/**
 * Ascending order of sort keys: numbers numerically, strings by UTF-16 code unit, null after
 * everything. One index holds keys of one type (or null); a number against a string only happens
 * with a forged cursor, and ordering numbers first keeps the order total even then.
 */
export function compareSortValues(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return typeof a === 'number' ? -1 : 1;
}

export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Negative when (aKey, aId) comes before (bKey, bId) in the listing order `order`. Not the
 * negation of the ascending comparison for `desc`: nulls stay last in both orders.
 */
export function compareInOrder(
  order: SortOrder,
  aKey: SortValue,
  aId: string,
  bKey: SortValue,
  bId: string,
): number {
  if (aKey === null || bKey === null) {
    if (aKey !== bKey) return aKey === null ? 1 : -1;
  }
  const ascending = compareSortValues(aKey, bKey) || compareIds(aId, bId);
  return order === 'asc' ? ascending : -ascending;
}
