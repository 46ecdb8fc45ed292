/**
 * Retention removes a job whose current state began before the cutoff. It finds them
 * through the createdAt index, which is right for every job whose state began at or after
 * its createdAt. The exceptions are jobs whose payload `createdAt` is later than the start of
 * their current state (a producer clock ahead of the workers'): this index holds just
 * those, by when their state began, so retention finds them without scanning every job.
 * Only a reported createdAt can be late: otherwise createdAt is the earliest event time.
 */
import { SortedIndex } from '../jobs/sorted-index.ts';
import type { JobTable } from './job-table.ts';

/** When retention judges a job by: the start of its current state (createdAt without history). */
export function retainedSinceMs(table: JobTable, row: number): number {
  return table.stateChangedAtMs(row) ?? table.createdAtMsOf(row);
}

/** Holds rows: the caller deletes a job's row before the row is freed. */
export class LateCreatedJobs {
  private readonly index: SortedIndex<number>;
  /** the key each held row was indexed with, to find it again after the job changed */
  private readonly keys = new Map<number, number>();

  constructor(private readonly table: JobTable) {
    this.index = new SortedIndex<number>(table.idOrder);
  }

  /** how many jobs are held: only the late ones, so the index stays small */
  get size(): number {
    return this.keys.size;
  }

  /** Call after every change of a job (and after loading it), with its row as it is now. */
  update(row: number): void {
    const heldKey = this.keys.get(row);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a fast path; a job without a reported createdAt is never late, so going on gives the same answer
    if (heldKey === undefined && !this.table.createdAtReportedOf(row)) return; // the common case, no work
    const sinceMs = retainedSinceMs(this.table, row);
    const late = sinceMs < this.table.createdAtMsOf(row);
    // Stryker disable next-line ConditionalExpression: a fast path; removing and inserting the same key gives the same index
    if (heldKey === sinceMs && late) return;
    // Stryker disable next-line ConditionalExpression: delete() of a job not held does nothing
    if (heldKey !== undefined) this.delete(row);
    if (!late) return;
    this.index.insert(sinceMs, row);
    this.keys.set(row, sinceMs);
  }

  delete(row: number): void {
    const heldKey = this.keys.get(row);
    // Stryker disable next-line ConditionalExpression: removing a job not held finds no entry and changes nothing
    if (heldKey === undefined) return;
    this.index.remove(heldKey, row);
    this.keys.delete(row);
  }

  /** The rows held whose current state began before `cutoffMs`, oldest first. */
  *retainedBefore(cutoffMs: number): Generator<number> {
    for (const entry of this.index.scan('asc')) {
      if ((entry.key as number) >= cutoffMs) return;
      yield entry.item;
    }
  }
}
