/**
 * What a workflow_stuck rule measures: since when the oldest unfinished workflow has been
 * running (its root started, or was created, and has not finished), and since when a
 * parent that has not started waits on a failed child (BullMQ's `waiting-children` with a
 * failed child: the job system will not go on by itself). Read through the relation index
 * (relation-index.ts): only jobs that name or are named as parent or root are looked at.
 */
import { parentRowOf, rootRowOf } from '../connection/job-links.ts';
import type { JobStore } from '../connection/job-store.ts';
import type { JobState } from '../ingest/states.ts';

const ENDED: ReadonlySet<JobState> = new Set(['completed', 'failed', 'cancelled']);
const WAITING: ReadonlySet<JobState> = new Set(['queued', 'scheduled']);

export interface StuckWorkflows {
  /** when the oldest unfinished root started (or was created); null when none */
  rootStartMs: number | null;
  /** when the earliest failed child a waiting parent waits on failed; null when none */
  failedChildMs: number | null;
}

/** `task`: only workflows whose root has this task name (null: every workflow). */
export function stuckWorkflowSinceMs(store: JobStore, task: string | null): StuckWorkflows {
  const { table, relationIndex } = store;
  const matches = (row: number): boolean => {
    if (task === null) return true;
    const root = rootRowOf(store, row);
    return root >= 0 && table.nameOf(root) === task;
  };
  let rootStartMs: number | null = null;
  let failedChildMs: number | null = null;
  const roots = new Set<number>();
  const consider = (code: number): void => {
    const name = table.relations.stringOfCode(code);
    const row = name === null ? -1 : store.rowOfExternalId(name);
    if (row < 0 || roots.has(row) || parentRowOf(store, row) >= 0 || rootRowOf(store, row) !== row) return;
    roots.add(row);
    if (ENDED.has(table.stateOf(row)) || !matches(row)) return;
    const startMs = table.startedAtMsOf(row) ?? table.createdAtMsOf(row);
    if (rootStartMs === null || startMs < rootStartMs) rootStartMs = startMs;
  };
  for (const [code, children] of relationIndex.parents()) {
    consider(code);
    const name = table.relations.stringOfCode(code);
    const parent = name === null ? -1 : store.rowOfExternalId(name);
    if (parent < 0 || !WAITING.has(table.stateOf(parent)) || !matches(parent)) continue;
    for (const child of children) {
      if (table.stateOf(child) !== 'failed') continue;
      const failedMs = table.completedAtMsOf(child) ?? table.lastEventMsOf(child);
      if (failedChildMs === null || failedMs < failedChildMs) failedChildMs = failedMs;
    }
  }
  for (const code of relationIndex.roots()) consider(code);
  return { rootStartMs, failedChildMs };
}
