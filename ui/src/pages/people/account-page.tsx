/** Your account: your teams and your role in each, and changing your password (your other sessions end). */
import { useSignal } from '@preact/signals';
import { api } from '../../api/client.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { Link } from '../../components/link.tsx';
import { teams, user } from '../../session.ts';

const PASSWORD_MIN = 12;

export function AccountPage() {
  const error = useSignal<unknown>(null);
  const done = useSignal(false);
  const busy = useSignal(false);
  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    busy.value = true;
    error.value = null;
    done.value = false;
    try {
      await api('POST', '/api/auth/password', { currentPassword: fields.get('current'), newPassword: fields.get('next') });
      form.reset();
      done.value = true;
    } catch (failure) {
      error.value = failure;
    } finally {
      busy.value = false;
    }
  };
  const mine = teams.value.filter((team) => team.role !== null);
  return (
    <>
      <div class="page-head">
        <h1>Your account</h1>
        <span class="muted">{user.value?.email}</span>
        {user.value?.isAdmin && <span class="badge">instance admin</span>}
      </div>
      <h2>Your teams</h2>
      {mine.length === 0 ? (
        <EmptyState title="You are in no team">You see no data until an admin of a team adds you to it.</EmptyState>
      ) : (
        <ul class="plain">
          {mine.map((team) => (
            <li key={team.id}>
              <Link href={`/teams/${team.id}`}>{team.name}</Link>: <strong>{team.role}</strong>
            </li>
          ))}
        </ul>
      )}
      <h2>Change your password</h2>
      <form class="form-row card" onSubmit={onSubmit}>
        <label>
          <span>Current password</span>
          <input name="current" type="password" autocomplete="current-password" required />
        </label>
        <label>
          <span>New password (at least {PASSWORD_MIN} characters)</span>
          <input name="next" type="password" autocomplete="new-password" minLength={PASSWORD_MIN} required />
        </label>
        <button type="submit" class="primary" disabled={busy.value}>
          Change password
        </button>
      </form>
      <ErrorText error={error.value} />
      {done.value && (
        <p role="status" class="ok">
          Password changed. Your other sessions have ended; this one goes on.
        </p>
      )}
    </>
  );
}
