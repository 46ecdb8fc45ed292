/** Teams: yours with your role in each (every team for the instance admin, who creates them). */
import { useSignal } from '@preact/signals';
import { api } from '../../api/client.ts';
import type { PublicTeam } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { Link } from '../../components/link.tsx';
import { isInstanceAdmin } from '../../lib/roles.ts';
import { refreshConnections, teams } from '../../session.ts';

export function TeamsPage() {
  const error = useSignal<unknown>(null);
  const onCreate = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    error.value = null;
    try {
      await api('POST', '/api/teams', { name: new FormData(form).get('name') });
      form.reset();
      await refreshConnections();
    } catch (failure) {
      error.value = failure;
    }
  };
  const columns: Column<PublicTeam>[] = [
    { id: 'name', label: 'Team', cell: (team) => <Link href={`/teams/${team.id}`}>{team.name}</Link> },
    { id: 'role', label: 'Your role', cell: (team) => team.role ?? <span class="muted">not a member</span> },
    { id: 'members', label: 'Members', class: 'num', cell: (team) => team.members },
    { id: 'connections', label: 'Connections', class: 'num', cell: (team) => team.connections },
  ];
  return (
    <>
      <div class="page-head">
        <h1>Teams</h1>
      </div>
      <p class="hint">A team owns connections; its members see them with their role: viewers read, operators also revoke and retry, admins also manage connections, alerts and members.</p>
      {isInstanceAdmin() ? (
        <form class="form-row card" onSubmit={onCreate}>
          <label>
            <span>New team</span>
            <input name="name" required maxLength={100} placeholder="production" />
          </label>
          <button type="submit" class="primary">
            Create team
          </button>
        </form>
      ) : (
        <p class="hint">Only the instance admin creates teams.</p>
      )}
      <ErrorText error={error.value} />
      {teams.value.length === 0 ? <EmptyState title="You are in no team">Ask an admin of a team to add you.</EmptyState> : <DataTable label="Teams" rows={teams.value} columns={columns} />}
    </>
  );
}
