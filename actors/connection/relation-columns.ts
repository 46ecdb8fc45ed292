/**
 * A job's parent and the first job of its workflow, as the job system names them (their
 * externalIds): the `parentExternalId` and `rootExternalId` code columns of the job table
 * (job-column-list.ts), codes into its code table of names. Children of one parent share
 * its code, so a workflow's parent id is kept once. Reads resolve a name to the jobwatch job
 * of the same connection when they need it, so a child that arrives before its parent needs
 * no pending link: the parent's row is found once it exists.
 *
 * This is the relation index's and the workflow reads' view of those two columns: codes
 * (what the index files rows under) and the names they stand for.
 */
import { NO_CODE, type CodeTable } from './code-table.ts';

/** The table's two relation columns, read where they are now (the table replaces them when it grows). */
export interface RelationArrays {
  readonly parentExternalId: Int32Array;
  readonly rootExternalId: Int32Array;
}

export class RelationColumns {
  constructor(
    private readonly columns: RelationArrays,
    private readonly codes: CodeTable,
  ) {}

  parentOf(row: number): string | null {
    return this.codes.stringOf(this.parentCodeOf(row));
  }

  rootOf(row: number): string | null {
    return this.codes.stringOf(this.rootCodeOf(row));
  }

  /** The code the child index files a row under as a child (NO_CODE: no parent). */
  parentCodeOf(row: number): number {
    return this.columns.parentExternalId[row] ?? NO_CODE;
  }

  rootCodeOf(row: number): number {
    return this.columns.rootExternalId[row] ?? NO_CODE;
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
