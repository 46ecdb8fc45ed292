/** Workers: state, heartbeat age (ticking), active jobs, processed, rate, queues, metadata, their controls; live. */
import { useEffect } from 'preact/hooks';
import { api, queryString } from '../../api/client.ts';
import { onLive } from '../../api/stream.ts';
import type { WorkerPage, WorkerView } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { FilterBar } from '../../components/filter-bar.tsx';
import { Link } from '../../components/link.tsx';
import { PagePager } from '../../components/page-pager.tsx';
import { StateBadge } from '../../components/state-badge.tsx';
import { now } from '../../lib/clock.ts';
import { relativeTime } from '../../lib/time.ts';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { navigate, route, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';
import { WorkerControls } from './worker-controls.tsx';
import { workerTitle } from './worker-title.ts';

const WORKER_STATES = ['online', 'busy', 'idle', 'offline'] as const;

const SORT_KEYS = ['hostname', 'state', 'activeJobs', 'lastHeartbeat', 'taskRate'];

const COLUMNS: Column<WorkerView>[] = [
  {
    id: 'hostname',
    label: 'Worker',
    sortKey: 'hostname',
    class: 'col-task',
    cell: (w) => (
      <>
        <Link href={`/jobs?worker=${encodeURIComponent(w.externalId)}`}>{workerTitle(w)}</Link>
        <small class="muted mono ellipsis">{w.externalId}</small>
        {/* at phone width the controls go under the title, which keeps its room */}
        <div class="show-narrow">
          <WorkerControls worker={w} />
        </div>
      </>
    ),
  },
  { id: 'state', label: 'State', sortKey: 'state', class: 'col-state', cell: (w) => <StateBadge state={w.state} /> },
  {
    id: 'lastHeartbeat',
    label: 'Last heard',
    sortKey: 'lastHeartbeat',
    class: 'col-time',
    cell: (w) => (w.lastHeartbeat === null ? '–' : <time dateTime={w.lastHeartbeat} title={w.lastHeartbeat}>{relativeTime(w.lastHeartbeat, now.value)}</time>),
  },
  // at phone width: the worker (its controls under it), its state and when it was last heard
  { id: 'activeJobs', label: 'Active', sortKey: 'activeJobs', class: 'col-duration num hide-narrow', cell: (w) => `${w.activeJobs}${w.concurrency === null ? '' : ` / ${w.concurrency}`}` },
  { id: 'processed', label: 'Processed', class: 'col-duration num hide-narrow', cell: (w) => (w.processedTotal ?? 0).toLocaleString() },
  { id: 'taskRate', label: 'Rate', sortKey: 'taskRate', class: 'col-duration num hide-narrow', cell: (w) => (w.taskRate === null ? '–' : `${w.taskRate.toFixed(1)}/min`) },
  { id: 'queues', label: 'Queues', class: 'hide-narrow', cell: (w) => <span class="ellipsis">{w.queues.join(', ') || '–'}</span> },
  { id: 'controls', label: 'Controls', class: 'col-actions hide-narrow', cell: (w) => <WorkerControls worker={w} /> },
  {
    id: 'metadata',
    label: 'Metadata',
    class: 'hide-narrow',
    cell: (w) =>
      Object.keys(w.metadata).length === 0 ? (
        <span class="muted">–</span>
      ) : (
        <details>
          <summary>{Object.keys(w.metadata).length} fields</summary>
          <pre>{JSON.stringify(w.metadata, null, 2)}</pre>
        </details>
      ),
  },
];

export function WorkersPage() {
  const query = route.value.query;
  const sortBy = SORT_KEYS.includes(query.get('sortBy') ?? '') ? query.get('sortBy')! : 'hostname';
  const sortOrder = query.get('sortOrder') === 'desc' ? 'desc' : 'asc';
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const params = queryString({ page, limit: 50, sortBy, sortOrder, state: query.get('state'), connectionId: query.get('connectionId') });
  const { data, error } = useLiveReload(() => api<WorkerPage>('GET', `/api/workers${params}`), (batch) => batch.workers.length > 0 || batch.commands.some((command) => command.target.kind === 'worker'), params);
  // a worker on screen changes at once; the reload after it brings new ones and the order
  useEffect(
    () =>
      onLive((batch) => {
        const current = data.value;
        if (current === null || batch.workers.length === 0) return;
        const changed = new Map(batch.workers.map((worker) => [worker.id, worker]));
        data.value = { ...current, data: current.data.map((worker) => changed.get(worker.id) ?? worker) };
      }),
    [],
  );
  const workers = data.value;
  const onSort = (key: string) => navigate(withQuery({ sortBy: key, sortOrder: key === sortBy && sortOrder === 'asc' ? 'desc' : 'asc' }), { replace: true });
  return (
    <>
      <div class="page-head">
        <h1>Workers</h1>
        <span class="hint">Offline after 6 s without a heartbeat.</span>
      </div>
      <FilterBar
        fields={[
          { key: 'state', label: 'State', options: WORKER_STATES.map((s) => [s, s]) },
          { key: 'connectionId', label: 'Connection', options: connections.value.map((c) => [c.id, c.name]) },
        ]}
      />
      <ErrorText error={error.value} />
      {workers === null ? (
        <p class="muted">Loading…</p>
      ) : workers.data.length === 0 ? (
        <EmptyState title="No workers">Workers appear when the agent reports them (worker online and heartbeat events).</EmptyState>
      ) : (
        <>
          <DataTable label="Workers" rows={workers.data} columns={COLUMNS} sort={{ by: sortBy, order: sortOrder, onSort }} />
          <PagePager {...workers.pagination} />
        </>
      )}
    </>
  );
}
