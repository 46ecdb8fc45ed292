/**
 * The workflow a job belongs to (GET /api/jobs/{id}/workflow): why it is stuck first, the
 * totals per state, then the tree from the root down, each node linking to its job and
 * each parent foldable. Reloaded when the stream reports a change to any job of the tree.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { onLive } from '../../api/stream.ts';
import type { JobListItem, JobListPage, Workflow, WorkflowNode } from '../../api/types.ts';
import { BulkActions } from '../jobs/bulk-actions.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { Link } from '../../components/link.tsx';
import { StateBadge } from '../../components/state-badge.tsx';
import { TimeText } from '../../components/time-text.tsx';

/** Parents with more children than this start folded: a large flow stays readable. */
const UNFOLDED_CHILDREN_MAX = 50;

function useWorkflow(id: string) {
  const workflow = useSignal<Workflow | null>(null);
  const error = useSignal<unknown>(null);
  const generation = useRef(0);
  useEffect(() => {
    workflow.value = null;
    const mine = generation.current;
    const load = () =>
      api<Workflow>('GET', `/api/jobs/${encodeURIComponent(id)}/workflow`).then(
        (answer) => {
          if (mine !== generation.current) return;
          workflow.value = answer;
          error.value = null;
        },
        (failure) => mine === generation.current && (error.value = failure),
      );
    void load();
    const stop = onLive((batch) => {
      const shown = workflow.value;
      // a change to a job of the tree, or one naming a job of it as parent or root (a new child)
      const members = new Set(shown?.nodes.map((node) => node.id) ?? [id]);
      if (batch.reset || batch.jobs.some((job) => members.has(job.id) || (job.parentId !== null && members.has(job.parentId)) || (job.rootId !== null && members.has(job.rootId)))) void load();
    });
    return () => {
      generation.current++;
      stop();
    };
  }, [id]);
  return { workflow, error };
}

export function WorkflowSection({ jobId }: { jobId: string }) {
  const { workflow, error } = useWorkflow(jobId);
  const shown = workflow.value;
  if (shown === null) return error.value ? <ErrorText error={error.value} /> : null;
  // a job alone is no workflow: nothing to draw
  if (shown.nodes.length <= 1 && shown.missingRootExternalId === null && shown.nodes[0]?.missingParentExternalId == null) return null;
  return (
    <>
      <h2>Workflow</h2>
      <section class="card workflow" aria-label="Workflow">
        <StuckReasons workflow={shown} />
        <WorkflowTotals workflow={shown} />
        {shown.truncated !== null && <p class="notice">{shown.truncated.message}</p>}
        {shown.missingRootExternalId !== null && (
          <p class="muted">
            The root these jobs name, <span class="mono">{shown.missingRootExternalId}</span>, is not here: not arrived yet, or removed by retention.
          </p>
        )}
        <WorkflowActions workflow={shown} />
        <WorkflowTree workflow={shown} currentId={jobId} />
      </section>
    </>
  );
}

/** Pages of the workflow's jobs read for its actions (100 a page): up to the tree's 10,000. */
const ACTION_PAGES_MAX = 100;

/**
 * Revoke every unfinished job of the workflow, retry its failed ones: the jobs list's bulk
 * actions over the workflow's jobs (`GET /api/jobs?rootId=`, with what each can do now and
 * the user's role), carried out by the agents job by job, each result listed.
 */
function WorkflowActions({ workflow }: { workflow: Workflow }) {
  const jobs = useSignal<JobListItem[] | null>(null);
  const error = useSignal<unknown>(null);
  useEffect(() => {
    let current = true;
    (async () => {
      const items: JobListItem[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < ACTION_PAGES_MAX; page++) {
        const query: string = `rootId=${encodeURIComponent(workflow.rootId)}&limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const answer: JobListPage = await api<JobListPage>('GET', `/api/jobs?${query}`);
        items.push(...answer.data);
        cursor = answer.pagination.nextCursor;
        if (cursor === null) break;
      }
      if (current) jobs.value = items;
    })().catch((failure) => current && (error.value = failure));
    return () => {
      current = false;
    };
  }, [workflow]);
  if (error.value) return <ErrorText error={error.value} />;
  // a job whose root is not here has no workflow list to act on
  if (jobs.value === null || jobs.value.length === 0) return null;
  return <BulkActions selected={jobs.value} subject="in this workflow" onDone={() => undefined} />;
}

function StuckReasons({ workflow }: { workflow: Workflow }) {
  if (workflow.stuck.length === 0) return null;
  const byId = new Map(workflow.nodes.map((node) => [node.id, node]));
  return (
    <div class="error workflow-stuck" role="alert">
      <strong>Why it is stuck</strong>
      <ul>
        {workflow.stuck.map((reason) => (
          <li key={`${reason.jobId}-${reason.kind}`}>
            <Link href={`/jobs/${reason.jobId}`}>{byId.get(reason.jobId)?.name ?? reason.jobId}</Link>: {reason.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

function WorkflowTotals({ workflow }: { workflow: Workflow }) {
  const counted = Object.entries(workflow.totals).filter(([, count]) => count > 0);
  return (
    <p class="workflow-totals">
      {workflow.nodes.length} {workflow.nodes.length === 1 ? 'job' : 'jobs'}:{' '}
      {counted.map(([state, count]) => (
        <span key={state} class="workflow-total">
          <StateBadge state={state} /> {count}
        </span>
      ))}
    </p>
  );
}

function WorkflowTree({ workflow, currentId }: { workflow: Workflow; currentId: string }) {
  const childrenOf = useMemo(() => {
    const map = new Map<string, WorkflowNode[]>();
    for (const node of workflow.nodes) {
      if (node.parentId === null) continue;
      const siblings = map.get(node.parentId);
      if (siblings === undefined) map.set(node.parentId, [node]);
      else siblings.push(node);
    }
    return map;
  }, [workflow]);
  const folded = useSignal<Set<string>>(initiallyFolded(workflow, childrenOf, currentId));
  const toggle = (id: string) => {
    const next = new Set(folded.value);
    if (!next.delete(id)) next.add(id);
    folded.value = next;
  };
  const stuck = new Set(workflow.stuck.map((reason) => reason.jobId));
  const renderNode = (node: WorkflowNode) => {
    const below = childrenOf.get(node.id) ?? [];
    const isFolded = folded.value.has(node.id);
    return (
      <li key={node.id} class={node.id === currentId ? 'current' : undefined}>
        <div class="workflow-node">
          {below.length > 0 ? (
            <button type="button" class="fold" aria-expanded={!isFolded} aria-label={`${isFolded ? 'Unfold' : 'Fold'} the ${below.length} jobs under ${node.name}`} onClick={() => toggle(node.id)}>
              {isFolded ? '▸' : '▾'}
            </button>
          ) : (
            <span class="fold-spacer" aria-hidden="true" />
          )}
          <StateBadge state={node.state} />
          {node.nativeState !== null && node.nativeState !== node.state && <span class="muted workflow-native">{node.nativeState}</span>}
          {node.id === currentId ? <strong class="mono">{node.name}</strong> : <Link href={`/jobs/${node.id}`} class="mono">{node.name}</Link>}
          <span class="muted mono ellipsis workflow-external">{node.externalId}</span>
          {stuck.has(node.id) && <span class="badge state-failed">stuck</span>}
          {node.edge === 'root' && <span class="muted">(in the workflow, no parent here)</span>}
          {node.missingParentExternalId !== null && <span class="muted">(parent {node.missingParentExternalId} not here)</span>}
          <span class="muted workflow-time">
            <TimeText iso={node.completedAt ?? node.startedAt ?? node.createdAt} />
          </span>
          {isFolded && <span class="muted">{below.length} folded</span>}
        </div>
        {below.length > 0 && !isFolded && <ul>{below.map(renderNode)}</ul>}
      </li>
    );
  };
  const tops = workflow.nodes.filter((node) => node.parentId === null);
  return <ul class="workflow-tree" aria-label="Workflow tree">{tops.map(renderNode)}</ul>;
}

/** Parents with many children start folded, except the current job and those above it (it stays in sight). */
function initiallyFolded(workflow: Workflow, childrenOf: Map<string, WorkflowNode[]>, currentId: string): Set<string> {
  const byId = new Map(workflow.nodes.map((node) => [node.id, node]));
  const inSight = new Set<string>();
  for (let node = byId.get(currentId); node !== undefined && !inSight.has(node.id); node = node.parentId === null ? undefined : byId.get(node.parentId)) inSight.add(node.id);
  return new Set(workflow.nodes.filter((node) => (childrenOf.get(node.id)?.length ?? 0) > UNFOLDED_CHILDREN_MAX && !inSight.has(node.id)).map((node) => node.id));
}
