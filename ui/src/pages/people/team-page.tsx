/**
 * One team: its members and their roles. Its admins (and the instance admin) add members,
 * change roles and remove members, and rename it; everyone else sees the list and why
 * they cannot change it.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { PublicMember, PublicTeam, Role } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { isInstanceAdmin } from '../../lib/roles.ts';
import { refreshConnections, user } from '../../session.ts';

const ROLES: Role[] = ['viewer', 'operator', 'admin'];

export function TeamPage({ id }: { id: string }) {
  const team = useSignal<PublicTeam | null>(null);
  const members = useSignal<PublicMember[]>([]);
  const error = useSignal<unknown>(null);
  const base = `/api/teams/${encodeURIComponent(id)}`;
  const load = async () => {
    try {
      team.value = (await api<{ team: PublicTeam }>('GET', base)).team;
      members.value = (await api<{ data: PublicMember[] }>('GET', `${base}/members`)).data;
    } catch (failure) {
      error.value = failure;
    }
  };
  useEffect(() => void load(), [id]);
  const act = async (work: () => Promise<unknown>) => {
    error.value = null;
    try {
      await work();
      await load();
      await refreshConnections(); // your own role may have changed
    } catch (failure) {
      error.value = failure;
    }
  };
  if (team.value === null) return error.value ? <ErrorText error={error.value} /> : <p class="loading">Loading…</p>;
  const manages = team.value.role === 'admin' || isInstanceAdmin();
  const why = manages ? undefined : `Only an admin of ${team.value.name} changes its members; your role is ${team.value.role ?? 'none'}.`;
  const columns: Column<PublicMember & { id: string }>[] = [
    { id: 'email', label: 'Member', cell: (member) => <>{member.email}{member.disabled && <span class="badge">disabled</span>}{member.userId === user.value?.id && <span class="muted"> (you)</span>}</> },
    {
      id: 'role',
      label: 'Role',
      cell: (member) => (
        <select aria-label={`Role of ${member.email}`} value={member.role} disabled={!manages} title={why} onChange={(event) => void act(() => api('PATCH', `${base}/members/${member.userId}`, { role: event.currentTarget.value }))}>
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      ),
    },
    { id: 'since', label: 'Since', class: 'col-time hide-narrow', cell: (member) => <TimeText iso={member.since} /> },
    {
      id: 'remove',
      label: '',
      class: 'col-duration',
      cell: (member) => (
        <button type="button" class="small danger" disabled={!manages} title={why} aria-label={`Remove ${member.email}`} onClick={() => void act(() => api('DELETE', `${base}/members/${member.userId}`))}>
          Remove
        </button>
      ),
    },
  ];
  const onAdd = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    await act(() => api('POST', `${base}/members`, { email: fields.get('email'), role: fields.get('role') }));
    form.reset();
  };
  return (
    <>
      <div class="page-head">
        <h1>{team.value.name}</h1>
        <span class="muted">
          {team.value.connections} connection{team.value.connections === 1 ? '' : 's'} · your role: {team.value.role ?? 'not a member'}
        </span>
      </div>
      {manages ? (
        <form class="form-row card" onSubmit={onAdd}>
          <label>
            <span>Add a member by email</span>
            <input name="email" type="email" required autocomplete="off" />
          </label>
          <label>
            <span>Role</span>
            <select name="role">
              {ROLES.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary">
            Add member
          </button>
        </form>
      ) : (
        <p class="hint">{why}</p>
      )}
      <ErrorText error={error.value} />
      {members.value.length === 0 ? (
        <EmptyState title="No members yet">{manages ? 'Add the first above.' : undefined}</EmptyState>
      ) : (
        <DataTable label={`Members of ${team.value.name}`} rows={members.value.map((member) => ({ ...member, id: member.userId }))} columns={columns} />
      )}
    </>
  );
}
