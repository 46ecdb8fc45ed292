/**
 * A job's parent, children and root as jobwatch jobs, read through the relation columns
 * (relation-columns.ts) and the relation index (relation-index.ts). A job names its parent
 * and root by the job system's ids; each read resolves them to the job of the same
 * connection with that externalId, so a link is filled in as soon as the job it names
 * arrives, in whichever order they came. Rows are read in one synchronous step.
 */
import type { JobStore } from './job-store.ts';

/** How far up a root is looked for: a workflow deeper than this is read from the job 32 levels up. */
export const WORKFLOW_DEPTH_MAX = 32;

export interface JobRelations {
  /** the jobwatch id of the parent; null without one, or while it has not arrived */
  parentId: string | null;
  /** the jobwatch id of the workflow's first job (the job itself when it starts one); null outside a workflow, or while the root has not arrived */
  rootId: string | null;
}

export const NO_RELATIONS: JobRelations = Object.freeze({ parentId: null, rootId: null });

/** The row of the job's parent; -1 without one, or while it has not arrived. */
export function parentRowOf(store: JobStore, row: number): number {
  const name = store.table.relations.parentOf(row);
  return name === null ? -1 : store.rowOfExternalId(name);
}

/** The rows naming this job as their parent; the store must not change while iterating. */
export function childRowsOf(store: JobStore, row: number): ReadonlySet<number> {
  const relations = store.table.relations;
  return store.relationIndex.childrenOf(relations.codeOf(store.table.externalId(row)));
}

/** The rows naming this job as their root (Celery names every task of a canvas's root). */
export function rootMemberRowsOf(store: JobStore, row: number): ReadonlySet<number> {
  const relations = store.table.relations;
  return store.relationIndex.membersOf(relations.codeOf(store.table.externalId(row)));
}

/** Whether the job starts a workflow: some job names it as parent or root. */
export function startsWorkflow(store: JobStore, row: number): boolean {
  return childRowsOf(store, row).size > 0 || rootMemberRowsOf(store, row).size > 0;
}

/**
 * The row of the job's root: the job the job system names as root, else the topmost parent
 * reached (at most WORKFLOW_DEPTH_MAX levels up), else the job itself when it starts a
 * workflow. -1 outside a workflow, or while the root (or a parent on the way) has not arrived.
 */
export function rootRowOf(store: JobStore, row: number): number {
  const relations = store.table.relations;
  let current = row;
  for (let depth = 0; depth < WORKFLOW_DEPTH_MAX; depth++) {
    const root = relations.rootOf(current);
    if (root !== null) return store.rowOfExternalId(root);
    const parent = relations.parentOf(current);
    if (parent === null) return current !== row || startsWorkflow(store, row) ? current : -1;
    const parentRow = store.rowOfExternalId(parent);
    if (parentRow < 0) return -1;
    current = parentRow;
  }
  return current;
}

/** The job's parent and root as jobwatch ids. */
export function relationsOf(store: JobStore, row: number): JobRelations {
  const parent = parentRowOf(store, row);
  const root = rootRowOf(store, row);
  return { parentId: parent < 0 ? null : store.table.id(parent), rootId: root < 0 ? null : store.table.id(root) };
}
