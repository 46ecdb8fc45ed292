/** Users (admin only): create a user who signs in with their own email and password. */
import { useSignal } from '@preact/signals';
import { api } from '../api/client.ts';
import type { PublicUser } from '../api/types.ts';
import { EmptyState } from '../components/empty-state.tsx';
import { ErrorText } from '../components/error-text.tsx';
import { user } from '../session.ts';

const PASSWORD_MIN = 12;

export function UsersPage() {
  const created = useSignal<PublicUser[]>([]);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  if (!user.value?.isAdmin) return <EmptyState title="Only an admin manages users">Ask your admin to create an account.</EmptyState>;
  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    busy.value = true;
    error.value = null;
    try {
      const reply = await api<{ user: PublicUser }>('POST', '/api/users', { email: fields.get('email'), password: fields.get('password') });
      created.value = [...created.value, reply.user];
      form.reset();
    } catch (failure) {
      error.value = failure;
    } finally {
      busy.value = false;
    }
  };
  return (
    <>
      <div class="page-head">
        <h1>Users</h1>
      </div>
      <p class="hint">Each user sees only the connections they create. Give the new user their password through a safe channel.</p>
      <form class="form-row card" onSubmit={onSubmit}>
        <label>
          <span>Email</span>
          <input name="email" type="email" required autocomplete="off" />
        </label>
        <label>
          <span>Password (at least {PASSWORD_MIN} characters)</span>
          <input name="password" type="password" required minLength={PASSWORD_MIN} autocomplete="new-password" />
        </label>
        <button type="submit" class="primary" disabled={busy.value}>
          Create user
        </button>
      </form>
      <ErrorText error={error.value} />
      {created.value.length > 0 && (
        <section aria-live="polite">
          <h2>Created now</h2>
          <ul>
            {created.value.map((each) => (
              <li key={each.id}>{each.email}</li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
