/**
 * A job's parent and the first job of its workflow, as the job system names them (their
 * externalIds): two code columns of the job table, into its code table of names. Children
 * of one parent share its code, so a workflow's parent id is kept once, and a job without
 * relations costs its two 4-byte cells and nothing else. Reads resolve a name to the
 * jobwatch job of the same connection when they need it, so a child that arrives before
 * its parent needs no pending link: the parent's row is found once it exists.
 */
import type { JobEvent } from '../ingest/normalized-event.ts';
import { NO_CODE, type CodeTable } from './code-table.ts';

export class RelationColumns {
  private parent = new Int32Array(0);
  private root = new Int32Array(0);

  constructor(private readonly codes: CodeTable) {}

  /** Room for `capacity` rows (the table's columns grow together). */
  grow(capacity: number): void {
    const parent = new Int32Array(capacity);
    parent.set(this.parent);
    this.parent = parent;
    const root = new Int32Array(capacity);
    root.set(this.root);
    this.root = root;
  }

  /** A new row: no relations (a grown column holds 0, which is a code). */
  empty(row: number): void {
    this.parent[row] = this.root[row] = NO_CODE;
  }

  /** A row taken from a copy or a snapshot. */
  set(row: number, parent: string | null, root: string | null): void {
    this.parent[row] = this.codes.acquire(parent);
    this.root[row] = this.codes.acquire(root);
  }

  /** A freed row gives its codes back. */
  release(row: number): void {
    this.codes.release(this.parent[row]!);
    this.codes.release(this.root[row]!);
    this.empty(row);
  }

  /** An event's relations: a newer event's replace the row's, an older one's only fill a gap. */
  merge(row: number, event: JobEvent, isNewest: boolean): void {
    take(this.codes, this.parent, row, event.parentExternalId, isNewest);
    take(this.codes, this.root, row, event.rootExternalId, isNewest);
  }

  parentOf(row: number): string | null {
    return this.codes.stringOf(this.parent[row]!);
  }

  rootOf(row: number): string | null {
    return this.codes.stringOf(this.root[row]!);
  }

  /** The code the child index files a row under as a child (NO_CODE: no parent). */
  parentCodeOf(row: number): number {
    return this.parent[row]!;
  }

  rootCodeOf(row: number): number {
    return this.root[row]!;
  }

  /** The externalId a held code stands for (a code of the relation index). */
  stringOfCode(code: number): string | null {
    return this.codes.stringOf(code);
  }

  /** The code an externalId has as someone's parent or root now; NO_CODE when no job names it. */
  codeOf(externalId: string): number {
    return this.codes.codeOf(externalId);
  }
}

function take(codes: CodeTable, column: Int32Array, row: number, value: string | undefined, isNewest: boolean): void {
  if (value === undefined || (!isNewest && column[row] !== NO_CODE)) return;
  const held = column[row]!;
  if (codes.stringOf(held) === value) return;
  codes.release(held);
  column[row] = codes.acquire(value);
}
