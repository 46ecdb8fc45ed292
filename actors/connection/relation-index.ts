/**
 * The jobs that name a parent, filed under the parent's code, and the jobs that name a
 * root, under the root's (codes of relation-columns.ts): a parent's children and a
 * workflow's members without a scan. Kept in step with every change of the rows' relations
 * by the job store, and built from the columns when a snapshot is loaded, so it survives a
 * restart as the columns do. Only jobs with relations have an entry.
 */
import { NO_CODE } from './code-table.ts';

export class RelationIndex {
  private readonly byParent = new Map<number, Set<number>>();
  private readonly byRoot = new Map<number, Set<number>>();

  /** Files a row under the codes it holds now. */
  add(row: number, parentCode: number, rootCode: number): void {
    file(this.byParent, parentCode, row);
    file(this.byRoot, rootCode, row);
  }

  /** Takes a row out from under the codes it held. */
  remove(row: number, parentCode: number, rootCode: number): void {
    unfile(this.byParent, parentCode, row);
    unfile(this.byRoot, rootCode, row);
  }

  /** The rows naming the parent with this code (empty for NO_CODE); the store must not change while iterating. */
  childrenOf(parentCode: number): ReadonlySet<number> {
    return this.byParent.get(parentCode) ?? NONE;
  }

  /** The rows naming the root with this code. */
  membersOf(rootCode: number): ReadonlySet<number> {
    return this.byRoot.get(rootCode) ?? NONE;
  }

  /** Every code some row names as its parent, with those rows; the store must not change while iterating. */
  parents(): IterableIterator<[number, ReadonlySet<number>]> {
    return this.byParent.entries();
  }

  /** Every code some row names as its root. */
  roots(): IterableIterator<number> {
    return this.byRoot.keys();
  }

  /** Rows filed as children, for tests of the index's upkeep. */
  get childEntries(): number {
    let count = 0;
    for (const rows of this.byParent.values()) count += rows.size;
    return count;
  }
}

const NONE: ReadonlySet<number> = new Set();

function file(index: Map<number, Set<number>>, code: number, row: number): void {
  if (code === NO_CODE) return;
  const rows = index.get(code);
  if (rows === undefined) index.set(code, new Set([row]));
  else rows.add(row);
}

function unfile(index: Map<number, Set<number>>, code: number, row: number): void {
  if (code === NO_CODE) return;
  const rows = index.get(code);
  if (rows === undefined) return;
  rows.delete(row);
  if (rows.size === 0) index.delete(code);
}
