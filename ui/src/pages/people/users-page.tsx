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
import { DataTable } from '../../components/data-table.tsx';
import { InviteForm, userColumns } from './user-parts.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { ShownOnce } from '../../components/shown-once.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { isInstanceAdmin } from '../../lib/roles.ts';

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
  const columns = userColumns({ reset: (row) => void reset(row), setDisabled: (row, disabled) => void setDisabled(row, disabled), remove: (row) => (removing.value = row) });
  return (
    <>
      <div class="page-head">
        <h1>Users</h1>
      </div>
      <p class="hint">Invite someone with a link that sets their password (single use, for a limited time). Put them in a team now, or later on the team's page: a user sees only their teams' data.</p>
      <InviteForm busy={busy.value} onInvite={onInvite} />
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
