/** Jobs: state tabs, filters, the live list with selection and bulk actions, cursor paging. */
import { useComputed, useSignal } from '@preact/signals';
import { useEffect, useMemo } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { JobAction } from '../../api/job-actions.ts';
import type { JobListItem, PublicActionResult, QueuePage, WorkerPage } from '../../api/types.ts';
import type { JobCommandType } from '../../../../actors/connection/command-types.ts';
import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { FilterBar, type FilterField } from '../../components/filter-bar.tsx';
import { Link } from '../../components/link.tsx';
import { FRAMEWORKS, filtersFromQuery, WAITING_MAX } from '../../lib/job-filters.ts';
import { navigate, rememberJobsAddress, route, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';
import { BulkActions } from './bulk-actions.tsx';
import { firstOrderOf, jobColumnsFor } from './job-columns.tsx';
import { pendingRow } from './row-actions.tsx';
import { SavedViews } from './saved-views.tsx';
import { StateTabs } from './state-tabs.tsx';
import { createJobList } from './use-job-list.ts';

export function JobsPage() {
  const filters = filtersFromQuery(route.value.query);
  rememberJobsAddress();
  const key = JSON.stringify(filters);
  const list = useMemo(() => createJobList(filters), [key]);
  useEffect(() => () => list.dispose(), [list]);
  const selected = useSignal<ReadonlySet<string>>(new Set());
  useEffect(() => {
    selected.value = new Set();
  }, [key]);
  const suggestions = useSuggestions();
  const selectedRows = useComputed(() => list.rows.value.filter((row) => selected.value.has(row.id)));

  if (connections.value.length === 0) {
    return (
      <EmptyState title="No connection yet">
        Jobs arrive through a connection: <Link href="/connections">create one</Link>, then run the agent with its key (the page shows the
        command).
      </EmptyState>
    );
  }
  const fields: FilterField[] = [
    { key: 'search', label: 'Search task name', placeholder: 'e.g. send_email' },
    { key: 'queue', label: 'Queue', suggestions: suggestions.value.queues },
    { key: 'worker', label: 'Worker', suggestions: suggestions.value.workers },
    { key: 'connectionId', label: 'Connection', options: connections.value.map((c) => [c.id, c.name]) },
    { key: 'framework', label: 'Framework', options: FRAMEWORKS.map((f) => [f, f]) },
    { key: 'rootId', label: 'Workflow', placeholder: 'its root job id' },
  ];
  const onSort = (sortKey: string) => {
    const order = filters.sortBy === sortKey ? (filters.sortOrder === 'asc' ? 'desc' : 'asc') : firstOrderOf(sortKey);
    navigate(withQuery({ sortBy: sortKey, sortOrder: order }), { replace: true });
  };
  const toggle = (id: string) => {
    const next = new Set(selected.value);
    if (!next.delete(id)) next.add(id);
    selected.value = next;
  };
  const onDone = (type: JobAction, results: PublicActionResult[]) => {
    const lastCommand = { id: '', type, status: 'pending', reason: null, details: null, createdAt: new Date().toISOString(), completedAt: null } as const;
    list.patch(results.flatMap((result) => (result.success ? [{ id: result.id, state: result.state, lastCommand }] : [])));
    selected.value = new Set();
  };
  // a row's command shows on the row at once; the stream brings what the job system then did
  const onRowCommand = (job: JobListItem, type: JobCommandType) => list.patch([pendingRow(job, type)]);
  return (
    <>
      <JobsHead list={list} />
      <SavedViews />
      <StateTabs active={filters.state} counts={list.counts.value} />
      <FilterBar fields={fields} />
      <BulkActions selected={selectedRows.value} onDone={onDone} onClear={() => (selected.value = new Set())} />
      <ErrorText error={list.error.value} />
      <DataTable
        label="Jobs"
        rows={list.rows.value}
        columns={jobColumnsFor(filters.state, onRowCommand)}
        sort={{ by: filters.sortBy, order: filters.sortOrder, onSort }}
        selection={{
          selected: selected.value,
          onToggle: toggle,
          onToggleAll: (checked) => (selected.value = checked ? new Set(list.rows.value.map((row) => row.id)) : new Set()),
        }}
      />
      {!list.loading.value && list.rows.value.length === 0 && (
        <EmptyState title="No jobs match">
          {route.value.query.toString() === '' ? 'Jobs appear here live as the agent sends them.' : 'Change or clear the filters above.'}
        </EmptyState>
      )}
      <JobsPager list={list} />
    </>
  );
}

type JobList = ReturnType<typeof createJobList>;

/** The title, how many match, the live-rows switch and the button that shows rows waiting behind it. */
function JobsHead({ list }: { list: JobList }) {
  const waiting = list.waiting.value.length;
  return (
    <div class="page-head">
      <h1>Jobs</h1>
      <span class="muted" role="status">
        {list.total.value === null ? '' : `${list.total.value.toLocaleString()} matching`}
      </span>
      <label class="switch">
        <input type="checkbox" checked={list.paused.value} onChange={(event) => (list.paused.value = event.currentTarget.checked)} />
        Pause live rows
      </label>
      <button type="button" class={`new-rows${waiting > 0 ? '' : ' hidden'}`} onClick={() => void list.reload().then(() => scrollTo(0, 0))} aria-hidden={waiting === 0}>
        {waiting}{waiting >= WAITING_MAX ? '+' : ''} new – show
      </button>
    </div>
  );
}

/** "Load more" while the cursor has more, and how many rows are shown. */
function JobsPager({ list }: { list: JobList }) {
  return (
    <div class="pager">
      {list.nextCursor.value !== null && (
        <button type="button" onClick={() => void list.loadMore()} disabled={list.loading.value}>
          Load more
        </button>
      )}
      <span class="muted">
        {list.rows.value.length.toLocaleString()} shown{list.loading.value ? ' · loading…' : ''}
      </span>
    </div>
  );
}

/** Queue and worker names to suggest in the filter fields. */
function useSuggestions() {
  const suggestions = useSignal<{ queues: string[]; workers: string[] }>({ queues: [], workers: [] });
  useEffect(() => {
    Promise.all([api<QueuePage>('GET', '/api/queues?limit=100'), api<WorkerPage>('GET', '/api/workers?limit=100')]).then(
      ([queues, workers]) => {
        suggestions.value = { queues: [...new Set(queues.data.map((q) => q.name))], workers: [...new Set(workers.data.map((w) => w.externalId))] };
      },
      () => undefined, // suggestions are a convenience; the fields still work
    );
  }, []);
  return suggestions;
}
