/**
 * A job's parent and the first job of its workflow, as the job system names them (their
 * externalIds): two code columns of the job table, into its code table of names. Children
 * of one parent share its code, so a workflow's parent id is kept once. Reads resolve a
 * name to the jobwatch job of the same connection when they need it, so a child that
 * arrives before its parent needs no pending link: the parent's row is found once it exists.
 *
 * The two columns are made when the connection's first job with a relation arrives: a
 * connection without workflows (most Sidekiq ones, plain Celery tasks) pays nothing per job;
 * after that, 8 bytes a row of the table's capacity.
 */
import type { JobEvent } from '../ingest/normalized-event.ts';
import { NO_CODE, type CodeTable } from './code-table.ts';

export class RelationColumns {
  /** null until a job with a relation arrives (NO_CODE for every row meanwhile) */
  private parent: Int32Array | null = null;
  private root: Int32Array | null = null;
  private capacity = 0;

  constructor(private readonly codes: CodeTable) {}

  /** Room for `capacity` rows (the table's columns grow together). */
  grow(capacity: number): void {
    this.capacity = capacity;
    if (this.parent === null || this.root === null) return;
    this.parent = grownWithoutCodes(this.parent, capacity);
    this.root = grownWithoutCodes(this.root, capacity);
  }

  /** Bytes the columns hold: 0 until a job with a relation arrives. */
  get bytes(): number {
    return (this.parent?.byteLength ?? 0) + (this.root?.byteLength ?? 0);
  }

  /** A new row: no relations (a freed row's were given back, a grown column's cells are NO_CODE). */
  empty(row: number): void {
    if (this.parent === null || this.root === null) return;
    this.parent[row] = this.root[row] = NO_CODE;
  }

  /** A row taken from a copy or a snapshot. */
  set(row: number, parent: string | null, root: string | null): void {
    if (parent === null && root === null && this.parent === null) return;
    const columns = this.columns();
    columns.parent[row] = this.codes.acquire(parent);
    columns.root[row] = this.codes.acquire(root);
  }

  /** A freed row gives its codes back. */
  release(row: number): void {
    if (this.parent === null || this.root === null) return;
    this.codes.release(this.parent[row]!);
    this.codes.release(this.root[row]!);
    this.empty(row);
  }

  /** An event's relations: a newer event's replace the row's, an older one's only fill a gap. */
  merge(row: number, event: JobEvent, isNewest: boolean): void {
    if (event.parentExternalId === undefined && event.rootExternalId === undefined) return;
    const columns = this.columns();
    take(this.codes, columns.parent, row, event.parentExternalId, isNewest);
    take(this.codes, columns.root, row, event.rootExternalId, isNewest);
  }

  parentOf(row: number): string | null {
    return this.codes.stringOf(this.parentCodeOf(row));
  }

  rootOf(row: number): string | null {
    return this.codes.stringOf(this.rootCodeOf(row));
  }

  /** The code the child index files a row under as a child (NO_CODE: no parent). */
  parentCodeOf(row: number): number {
    return this.parent === null ? NO_CODE : this.parent[row]!;
  }

  rootCodeOf(row: number): number {
    return this.root === null ? NO_CODE : this.root[row]!;
  }

  /** The externalId a held code stands for (a code of the relation index). */
  stringOfCode(code: number): string | null {
    return this.codes.stringOf(code);
  }

  /** The code an externalId has as someone's parent or root now; NO_CODE when no job names it. */
  codeOf(externalId: string): number {
    return this.codes.codeOf(externalId);
  }

  /** The columns, made at the table's capacity with every row NO_CODE when they do not exist yet. */
  private columns(): { parent: Int32Array; root: Int32Array } {
    this.parent ??= new Int32Array(this.capacity).fill(NO_CODE);
    this.root ??= new Int32Array(this.capacity).fill(NO_CODE);
    return { parent: this.parent, root: this.root };
  }
}

/** A column grown to `capacity`, its new cells NO_CODE. */
function grownWithoutCodes(from: Int32Array, capacity: number): Int32Array {
  const grown = new Int32Array(capacity).fill(NO_CODE);
  grown.set(from);
  return grown;
}

function take(codes: CodeTable, column: Int32Array, row: number, value: string | undefined, isNewest: boolean): void {
  if (value === undefined || (!isNewest && column[row] !== NO_CODE)) return;
  const held = column[row]!;
  if (codes.stringOf(held) === value) return;
  codes.release(held);
  column[row] = codes.acquire(value);
}
