/**
 * GET /api/jobs/{id}/workflow: the tree a job belongs to, read from its root down through
 * the child index (job-links.ts), bounded in depth and nodes, with totals per state and,
 * for each node that waits, what it waits on.
 */
import type { JobState } from '../ingest/states.ts';
import { JOB_STATES } from '../ingest/states.ts';
import { childRowsOf, parentRowOf, rootMemberRowsOf, rootRowOf, WORKFLOW_DEPTH_MAX } from '../connection/job-links.ts';
import type { JobStore } from '../connection/job-store.ts';
import { isoOrNull } from '../clock.ts';

export const WORKFLOW_NODES_MAX = 10_000;
/** A job queued this long inside a workflow, whose parent runs or is done, is named as not started. */
export const NOT_STARTED_AFTER_MS = 60 * 60 * 1000;

export interface WorkflowNode {
  id: string;
  externalId: string;
  name: string;
  queue: string | null;
  state: JobState;
  /** the native state when the agent reports one (BullMQ's `waiting-children`) */
  nativeState: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  stateChangedAt: string | null;
  depth: number;
  /** the node above it in the tree; null for the top */
  parentId: string | null;
  /** `parent`: it names that job as its parent; `root`: it names the workflow's root only (a chord's group member), or its parent is not here */
  edge: 'parent' | 'root' | null;
  /** the parent the job names when that job is not here (not arrived yet, or removed by retention) */
  missingParentExternalId: string | null;
  children: number;
}

export interface StuckReason {
  jobId: string;
  kind: 'waiting_on_failed_child' | 'not_started';
  message: string;
  /** the jobs it waits on */
  waitsOn: string[];
}

export interface Workflow {
  jobId: string;
  rootId: string;
  /** the root the jobs name when that job is not here (not arrived yet, or removed by retention) */
  missingRootExternalId: string | null;
  nodes: WorkflowNode[];
  /** jobs per state (every state named, 0 where none) over the nodes */
  totals: Record<string, number>;
  stuck: StuckReason[];
  /** null when the whole tree is in `nodes`; else why and where it was cut */
  truncated: { reason: 'depth' | 'nodes'; message: string } | null;
  limits: { depthMax: number; nodesMax: number };
}

interface Visit {
  row: number;
  depth: number;
  parent: number;
  edge: 'parent' | 'root' | null;
}

/** The workflow of the job in `row`, read in one synchronous step. */
export function workflowOf(store: JobStore, row: number, nowMs: number, nodesMax = WORKFLOW_NODES_MAX): Workflow {
  const table = store.table;
  const top = topOf(store, row);
  const visits: Visit[] = [{ row: top, depth: 0, parent: -1, edge: null }];
  const seen = new Set<number>([top]);
  let truncated: Workflow['truncated'] = null;
  const childCount = new Map<number, number>();
  for (let at = 0; at < visits.length; at++) {
    const visit = visits[at]!;
    const below = childrenInOrder(store, visit.row, visit.row === top);
    childCount.set(visit.row, below.length);
    if (below.length === 0) continue;
    if (visit.depth >= WORKFLOW_DEPTH_MAX) {
      truncated ??= { reason: 'depth', message: `the tree is deeper than ${WORKFLOW_DEPTH_MAX} levels: jobs below level ${WORKFLOW_DEPTH_MAX} are left out` };
      continue;
    }
    for (const { row: child, edge } of below) {
      if (seen.has(child)) continue; // a cycle the job system reported: each job once
      if (visits.length >= nodesMax) {
        truncated = { reason: 'nodes', message: `the workflow has more than ${nodesMax} jobs: the first ${nodesMax} by level are shown` };
        break;
      }
      seen.add(child);
      visits.push({ row: child, depth: visit.depth + 1, parent: visit.row, edge });
    }
    if (truncated?.reason === 'nodes') break;
  }
  const totals: Record<string, number> = Object.fromEntries(JOB_STATES.map((state) => [state, 0]));
  const nodes = visits.map((visit) => {
    const state = table.stateOf(visit.row);
    totals[state] = totals[state]! + 1;
    const parentName = table.relations.parentOf(visit.row);
    return {
      id: table.id(visit.row),
      externalId: table.externalId(visit.row),
      name: table.nameOf(visit.row),
      queue: table.queueOf(visit.row),
      state,
      nativeState: nativeStateOf(store, visit.row),
      createdAt: new Date(table.createdAtMsOf(visit.row)).toISOString(),
      startedAt: isoOrNull(table.startedAtMsOf(visit.row)),
      completedAt: isoOrNull(table.completedAtMsOf(visit.row)),
      stateChangedAt: isoOrNull(table.stateChangedAtMs(visit.row)),
      depth: visit.depth,
      parentId: visit.parent < 0 ? null : table.id(visit.parent),
      edge: visit.edge,
      missingParentExternalId: parentName !== null && parentRowOf(store, visit.row) < 0 ? parentName : null,
      children: childCount.get(visit.row) ?? 0,
    } satisfies WorkflowNode;
  });
  const rootName = table.relations.rootOf(top);
  return {
    jobId: table.id(row),
    rootId: table.id(top),
    missingRootExternalId: rootName !== null && store.rowOfExternalId(rootName) < 0 ? rootName : null,
    nodes,
    totals,
    stuck: stuckReasons(nodes, nowMs),
    truncated,
    limits: { depthMax: WORKFLOW_DEPTH_MAX, nodesMax },
  };
}

/** The tree's top: the job's root, else the highest of its parents that is here. */
function topOf(store: JobStore, row: number): number {
  const root = rootRowOf(store, row);
  if (root >= 0) return root;
  let current = row;
  for (let depth = 0; depth < WORKFLOW_DEPTH_MAX; depth++) {
    const parent = parentRowOf(store, current);
    if (parent < 0 || parent === row) break;
    current = parent;
  }
  return current;
}

/**
 * The jobs right below a node, oldest first: the jobs naming it as parent, and at the top
 * also the jobs naming it as root whose parent is not here (a Celery group member has the
 * root and no parent).
 */
function childrenInOrder(store: JobStore, row: number, isTop: boolean): Array<{ row: number; edge: 'parent' | 'root' }> {
  const below: Array<{ row: number; edge: 'parent' | 'root' }> = [];
  for (const child of childRowsOf(store, row)) if (child !== row) below.push({ row: child, edge: 'parent' });
  if (isTop) for (const member of rootMemberRowsOf(store, row)) if (member !== row && parentRowOf(store, member) < 0) below.push({ row: member, edge: 'root' });
  const table = store.table;
  return below.sort((a, b) => table.createdAtMsOf(a.row) - table.createdAtMsOf(b.row) || table.idOrder.compareItems(a.row, b.row));
}

/** BullMQ's own state when its agent sends one (`extensions.bullmqState`). */
function nativeStateOf(store: JobStore, row: number): string | null {
  const text = store.table.textColumn('extensions').getOrNull(row);
  // most jobs' extensions do not name it: those are not parsed
  if (text === null || !text.includes('"bullmqState"')) return null;
  const native = (JSON.parse(text) as Record<string, unknown>).bullmqState;
  return typeof native === 'string' ? native : null;
}

const WAITING: ReadonlySet<JobState> = new Set(['queued', 'scheduled']);

/**
 * Why nodes wait: a parent not started (BullMQ's `waiting-children`, or any queued parent)
 * with a failed child, which the job system will not continue on its own; a job queued for
 * NOT_STARTED_AFTER_MS inside a workflow (a chord's member, a flow's child, no worker took it).
 */
function stuckReasons(nodes: readonly WorkflowNode[], nowMs: number): StuckReason[] {
  const failedChildren = new Map<string, WorkflowNode[]>();
  for (const node of nodes) {
    if (node.state !== 'failed' || node.parentId === null || node.edge !== 'parent') continue;
    const list = failedChildren.get(node.parentId);
    if (list === undefined) failedChildren.set(node.parentId, [node]);
    else list.push(node);
  }
  const reasons: StuckReason[] = [];
  for (const node of nodes) {
    const failed = failedChildren.get(node.id);
    if (failed !== undefined && WAITING.has(node.state)) {
      const names = failed.slice(0, 3).map((child) => `${child.name} (${child.externalId})`).join(', ');
      const waitingFor = node.nativeState === 'waiting-children' ? 'waits for its children (waiting-children)' : 'has not started';
      reasons.push({
        jobId: node.id,
        kind: 'waiting_on_failed_child',
        message: `${node.name} ${waitingFor}, and ${failed.length === 1 ? 'a child failed' : `${failed.length} children failed`}: ${names}${failed.length > 3 ? ` and ${failed.length - 3} more` : ''}. The job system will not continue it until the failed ${failed.length === 1 ? 'child is' : 'children are'} retried`,
        waitsOn: failed.map((child) => child.id),
      });
      continue;
    }
    const changedAt = node.stateChangedAt === null ? Number.NaN : Date.parse(node.stateChangedAt);
    if (node.depth > 0 && node.state === 'queued' && node.nativeState !== 'waiting-children' && nowMs - changedAt >= NOT_STARTED_AFTER_MS) {
      reasons.push({
        jobId: node.id,
        kind: 'not_started',
        message: `${node.name} has been queued since ${node.stateChangedAt} and never started: no worker took it from ${node.queue === null ? 'its queue' : `queue ${node.queue}`}`,
        waitsOn: [],
      });
    }
  }
  return reasons;
}
