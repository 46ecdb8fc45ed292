/** The audit log (the instance admin: all of it; a team admin: their teams'): who did what, newest first, with filters and "more". */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, queryString } from '../../api/client.ts';
import type { AuditPage as Page, PublicAuditEntry } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { readsAudit } from '../../lib/roles.ts';
import { navigate, route, withQuery } from '../../router.ts';
import { teams } from '../../session.ts';

export function AuditPage() {
  const entries = useSignal<PublicAuditEntry[]>([]);
  const next = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);
  const filters = { teamId: route.value.query.get('teamId') ?? undefined, outcome: route.value.query.get('outcome') ?? undefined, action: route.value.query.get('action') ?? undefined };
  const load = async (cursor?: string) => {
    try {
      const page = await api<Page>('GET', `/api/audit${queryString({ ...filters, cursor, limit: 50 })}`);
      entries.value = cursor === undefined ? page.data : [...entries.value, ...page.data];
      next.value = page.pagination.nextCursor;
    } catch (failure) {
      error.value = failure;
    }
  };
  useEffect(() => {
    if (readsAudit()) void load();
  }, [filters.teamId, filters.outcome, filters.action]);
  if (!readsAudit()) return <EmptyState title="The audit log is for admins">An admin of a team reads its entries; the instance admin reads all of them.</EmptyState>;
  const teamName = (id: string | null) => (id === null ? '' : (teams.value.find((team) => team.id === id)?.name ?? id));
  const columns: Column<PublicAuditEntry>[] = [
    { id: 'at', label: 'When', class: 'col-time', cell: (entry) => <TimeText iso={entry.at} /> },
    { id: 'who', label: 'Who', cell: (entry) => <>{entry.email}<div class="muted small mono">{entry.address}</div></> },
    { id: 'action', label: 'What', cell: (entry) => <span class="mono">{entry.action}</span> },
    { id: 'target', label: 'On', class: 'hide-narrow', cell: (entry) => <><span class="mono ellipsis">{entry.target ?? ''}</span><div class="muted small">{teamName(entry.teamId)}</div></> },
    { id: 'outcome', label: 'Outcome', cell: (entry) => <span class={`outcome-${entry.outcome}`} title={entry.error ?? undefined}>{entry.outcome}{entry.error !== null && <div class="muted small">{entry.error}</div>}</span> },
  ];
  const setFilter = (name: string) => (event: Event) => navigate(withQuery({ [name]: (event.currentTarget as HTMLSelectElement | HTMLInputElement).value }), { replace: true });
  return (
    <>
      <div class="page-head">
        <h1>Audit log</h1>
      </div>
      <div class="form-row">
        <label>
          <span>Team</span>
          <select value={filters.teamId ?? ''} onChange={setFilter('teamId')}>
            <option value="">all I may read</option>
            {teams.value.map((team) => (
              <option key={team.id} value={team.id}>
                {team.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Outcome</span>
          <select value={filters.outcome ?? ''} onChange={setFilter('outcome')}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="denied">denied</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <label>
          <span>Action</span>
          <input value={filters.action ?? ''} placeholder="job.revoke" onChange={setFilter('action')} />
        </label>
      </div>
      <ErrorText error={error.value} />
      {entries.value.length === 0 ? <EmptyState title="Nothing recorded yet">Changes people make appear here.</EmptyState> : <DataTable label="Audit log" rows={entries.value} columns={columns} />}
      {next.value !== null && (
        <p class="row end">
          <button type="button" onClick={() => void load(next.value!)}>
            More
          </button>
        </p>
      )}
    </>
  );
}
