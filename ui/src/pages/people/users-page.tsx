/**
 * Users (the instance admin): everyone with their state and teams; invite someone (a link
 * that sets their password, shown once), disable or enable, reset a password (a new link),
 * remove. Others are told the page is not theirs.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { CreatedUser, PasswordLinkAnswer, UserSummary } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { ShownOnce } from '../../components/shown-once.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { isInstanceAdmin } from '../../lib/roles.ts';
import { teams, user } from '../../session.ts';

export function UsersPage() {
  const users = useSignal<UserSummary[]>([]);
  const link = useSignal<{ email: string; answer: PasswordLinkAnswer } | null>(null);
  const removing = useSignal<UserSummary | null>(null);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const load = () => api<{ data: UserSummary[] }>('GET', '/api/users').then((answer) => (users.value = answer.data), (failure) => (error.value = failure));
  useEffect(() => {
    if (isInstanceAdmin()) void load();
  }, []);
  if (!isInstanceAdmin()) return <EmptyState title="Only the instance admin manages users">Ask them to invite someone, or an admin of your team to add them.</EmptyState>;

  const act = async (work: () => Promise<void>) => {
    error.value = null;
    try {
      await work();
      await load();
    } catch (failure) {
      error.value = failure;
    }
  };
  const onInvite = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const teamId = String(fields.get('teamId') ?? '');
    busy.value = true;
    await act(async () => {
      const created = await api<CreatedUser>('POST', '/api/users', { email: fields.get('email'), ...(teamId === '' ? {} : { teamId, role: fields.get('role') }) });
      link.value = { email: created.user.email, answer: created.invite! };
      form.reset();
    });
    busy.value = false;
  };
  const reset = (row: UserSummary) => act(async () => void (link.value = { email: row.email, answer: await api<PasswordLinkAnswer>('POST', `/api/users/${row.id}/password-reset`) }));
  const setDisabled = (row: UserSummary, disabled: boolean) => act(async () => void (await api('POST', `/api/users/${row.id}/${disabled ? 'disable' : 'enable'}`)));
  const self = (row: UserSummary) => row.id === user.value?.id;
  const columns: Column<UserSummary>[] = [
    { id: 'email', label: 'Email', cell: (row) => <><strong>{row.email}</strong>{row.isAdmin && <span class="badge">instance admin</span>}</> },
    { id: 'status', label: 'State', cell: (row) => <span class={`status-${row.status}`}>{row.status}</span> },
    { id: 'teams', label: 'Teams', cell: (row) => row.teams.map((team) => `${team.name} (${team.role})`).join(', ') || <span class="muted">none</span> },
    { id: 'created', label: 'Since', class: 'col-time hide-narrow', cell: (row) => <TimeText iso={row.createdAt} /> },
    {
      id: 'actions',
      label: '',
      cell: (row) => (
        <span class="actions">
          <button type="button" class="small" onClick={() => void reset(row)}>
            {row.status === 'invited' ? 'New invitation link' : 'Reset password'}
          </button>
          <button type="button" class="small" disabled={self(row)} title={self(row) ? 'You cannot disable yourself' : undefined} onClick={() => void setDisabled(row, row.status !== 'disabled')}>
            {row.status === 'disabled' ? 'Enable' : 'Disable'}
          </button>
          <button type="button" class="small danger" disabled={self(row)} title={self(row) ? 'You cannot remove yourself' : undefined} onClick={() => (removing.value = row)}>
            Remove
          </button>
        </span>
      ),
    },
  ];
  return (
    <>
      <div class="page-head">
        <h1>Users</h1>
      </div>
      <p class="hint">Invite someone with a link that sets their password (single use, for a limited time). Put them in a team now, or later on the team's page: a user sees only their teams' data.</p>
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
        <button type="submit" class="primary" disabled={busy.value}>
          Invite
        </button>
      </form>
      <ErrorText error={error.value} />
      {link.value && (
        <ShownOnce
          title={`The link for ${link.value.email}`}
          secret={link.value.answer.url}
          what="link"
          testId="password-link"
          note={<>Give it to them through a safe channel. It works once, until <TimeText iso={link.value.answer.expiresAt} />.</>}
          onDismiss={() => (link.value = null)}
        />
      )}
      <DataTable label="Users" rows={users.value} columns={columns} />
      {removing.value && (
        <ConfirmDialog title={`Remove ${removing.value.email}?`} confirmLabel="Remove user" danger onConfirm={() => void act(async () => void (await api('DELETE', `/api/users/${removing.value!.id}`))).then(() => (removing.value = null))} onCancel={() => (removing.value = null)}>
          <p>Their sessions and live streams end at once and they leave every team. What they did stays in the audit log.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
