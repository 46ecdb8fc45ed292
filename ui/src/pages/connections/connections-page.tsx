/**
 * Connections of your teams: create one in a team you are an admin of (its key shown once),
 * see usage and your role on each, delete one with all its data (its team's admins).
 */
import { useSignal } from '@preact/signals';
import { api } from '../../api/client.ts';
import { restartStream } from '../../api/stream.ts';
import type { CreatedConnection, PublicConnection } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { whyNotOnConnection } from '../../lib/roles.ts';
import { NewConnectionForm } from './new-connection-form.tsx';
import { connections, refreshConnections, teams } from '../../session.ts';
import { NewKeyCard } from './new-key-card.tsx';

export function ConnectionsPage() {
  const created = useSignal<CreatedConnection | null>(null);
  const deleting = useSignal<PublicConnection | null>(null);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);

  const changed = async () => {
    await refreshConnections();
    restartStream(); // a stream covers the connections owned when it opened
  };
  const onCreate = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const name = String(fields.get('name') ?? '');
    busy.value = true;
    error.value = null;
    try {
      created.value = await api<CreatedConnection>('POST', '/api/connections', { name, teamId: fields.get('teamId') });
      form.reset();
      await changed();
    } catch (failure) {
      error.value = failure;
    } finally {
      busy.value = false;
    }
  };
  const onDelete = async (connection: PublicConnection) => {
    deleting.value = null;
    error.value = null;
    try {
      await api('DELETE', `/api/connections/${encodeURIComponent(connection.id)}`);
      if (created.value?.connection.id === connection.id) created.value = null;
      await changed();
    } catch (failure) {
      error.value = failure;
    }
  };

  const columns: Column<PublicConnection>[] = [
    { id: 'name', label: 'Name', cell: (c) => <strong>{c.name}</strong> },
    { id: 'id', label: 'Connection id', class: 'hide-narrow', cell: (c) => <><span class="mono ellipsis">{c.id}</span> <CopyButton text={c.id} /></> },
    { id: 'team', label: 'Team', cell: (c) => <>{teams.value.find((team) => team.id === c.teamId)?.name ?? ''}<div class="muted small">you: {c.role}</div></> },
    { id: 'key', label: 'API key', cell: (c) => <span class="mono">{c.keyPrefix}…</span> },
    { id: 'usage', label: 'Events today', class: 'num', cell: (c) => `${c.usage.used.toLocaleString()}${c.usage.limit > 0 ? ` / ${c.usage.limit.toLocaleString()}` : ''}` },
    { id: 'created', label: 'Created', class: 'col-time hide-narrow', cell: (c) => <TimeText iso={c.createdAt} /> },
    {
      id: 'delete',
      label: '',
      class: 'col-duration',
      cell: (c) => {
        const why = whyNotOnConnection(c.id, 'admin', 'delete connections');
        return <button type="button" class="danger small" disabled={why !== null} title={why ?? undefined} onClick={() => (deleting.value = c)} aria-label={`Delete ${c.name}`}>Delete</button>;
      },
    },
  ];
  return (
    <>
      <div class="page-head">
        <h1>Connections</h1>
      </div>
      <p class="hint">A connection is one job system (say, production's Celery). It owns its jobs, workers and queues, and one API key.</p>
      <NewConnectionForm busy={busy.value} onCreate={onCreate} />
      <ErrorText error={error.value} />
      {created.value && <NewKeyCard created={created.value} onDismiss={() => (created.value = null)} />}
      <h2>Your teams' connections</h2>
      {connections.value.length === 0 ? (
        <EmptyState title="No connection yet">Create one above; the key it shows lets an agent send jobs here.</EmptyState>
      ) : (
        <DataTable label="Connections" rows={connections.value} columns={columns} />
      )}
      {deleting.value && (
        <ConfirmDialog title={`Delete ${deleting.value.name}?`} confirmLabel="Delete connection" danger onConfirm={() => void onDelete(deleting.value!)} onCancel={() => (deleting.value = null)}>
          <p>Its API key stops working at once, and all its jobs, workers and queues are removed. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
