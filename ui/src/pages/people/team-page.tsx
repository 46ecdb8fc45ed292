/**
 * One team: its members and their roles. Its admins (and the instance admin) add members,
 * change roles and remove members, and rename it; everyone else sees the list and why
 * they cannot change it.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { PublicMember, PublicTeam } from '../../api/types.ts';
import { DataTable } from '../../components/data-table.tsx';
import { AddMemberForm, memberColumns } from './team-parts.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { isInstanceAdmin } from '../../lib/roles.ts';
import { refreshConnections } from '../../session.ts';

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
  const columns = memberColumns({ manages, why, onRole: (member, role) => void act(() => api('PATCH', `${base}/members/${member.userId}`, { role })), onRemove: (member) => void act(() => api('DELETE', `${base}/members/${member.userId}`)) });
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
        <AddMemberForm onAdd={onAdd} />
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
