/** The Users page's parts: the invitation form and the table's columns (actions disabled on yourself, saying why). */
import type { UserSummary } from '../../api/types.ts';
import type { Column } from '../../components/data-table.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { teams, user } from '../../session.ts';

export function InviteForm({ busy, onInvite }: { busy: boolean; onInvite: (event: SubmitEvent) => void }) {
  return (
    <form class="form-row card" onSubmit={onInvite}>
      <label>
        <span>Email</span>
        <input name="email" type="email" required autocomplete="off" />
      </label>
      <label>
        <span>Team</span>
        <select name="teamId">
          <option value="">no team yet</option>
          {teams.value.map((team) => (
            <option key={team.id} value={team.id}>
              {team.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Role</span>
        <select name="role">
          <option value="viewer">viewer</option>
          <option value="operator">operator</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Invite
      </button>
    </form>
  );
}

export interface UserActions {
  reset: (row: UserSummary) => void;
  setDisabled: (row: UserSummary, disabled: boolean) => void;
  remove: (row: UserSummary) => void;
}

export function userColumns({ reset, setDisabled, remove }: UserActions): Column<UserSummary>[] {
  const self = (row: UserSummary) => row.id === user.value?.id;
  return [
    { id: 'email', label: 'Email', cell: (row) => <><strong>{row.email}</strong>{row.isAdmin && <span class="badge">instance admin</span>}</> },
    { id: 'status', label: 'State', cell: (row) => <span class={`status-${row.status}`}>{row.status}</span> },
    { id: 'teams', label: 'Teams', cell: (row) => row.teams.map((team) => `${team.name} (${team.role})`).join(', ') || <span class="muted">none</span> },
    { id: 'created', label: 'Since', class: 'col-time hide-narrow', cell: (row) => <TimeText iso={row.createdAt} /> },
    {
      id: 'actions',
      label: '',
      cell: (row) => (
        <span class="actions">
          <button type="button" class="small" onClick={() => reset(row)}>
            {row.status === 'invited' ? 'New invitation link' : 'Reset password'}
          </button>
          <button type="button" class="small" disabled={self(row)} title={self(row) ? 'You cannot disable yourself' : undefined} onClick={() => setDisabled(row, row.status !== 'disabled')}>
            {row.status === 'disabled' ? 'Enable' : 'Disable'}
          </button>
          <button type="button" class="small danger" disabled={self(row)} title={self(row) ? 'You cannot remove yourself' : undefined} onClick={() => remove(row)}>
            Remove
          </button>
        </span>
      ),
    },
  ];
}
