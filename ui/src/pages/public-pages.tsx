/**
 * The pages shown without a session: no access (single sign-on found no team for you),
 * and setting a password with an invitation or reset link (the token is in the address's
 * fragment, which no server sees).
 */
import { useSignal } from '@preact/signals';
import { api } from '../api/client.ts';
import type { PublicUser } from '../api/types.ts';
import { ErrorText } from '../components/error-text.tsx';
import { navigate } from '../router.ts';
import { loadSession } from '../session.ts';

const PASSWORD_MIN = 12;

export function NoAccessPage() {
  return (
    <main id="main" class="signin">
      <div class="card">
        <h1>No access to jobwatch</h1>
        <p>You signed in at your identity provider, but none of your groups gives you a team here, so there is nothing you may see.</p>
        <p class="hint">Ask whoever runs jobwatch to add one of your groups to OIDC_GROUP_MAP, or to add you to a team. Nothing was signed in.</p>
        <a class="button" href="/signin">
          Back to sign in
        </a>
      </div>
    </main>
  );
}

export function SetPasswordPage() {
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    if (form.get('password') !== form.get('again')) {
      error.value = new Error('The two passwords differ.');
      return;
    }
    busy.value = true;
    error.value = null;
    try {
      await api<{ user: PublicUser }>('POST', '/api/auth/set-password', { token, password: form.get('password') });
      history.replaceState(null, '', '/set-password'); // the used token leaves the address bar
      await loadSession();
      navigate('/jobs', { replace: true });
    } catch (failure) {
      error.value = failure;
    } finally {
      busy.value = false;
    }
  };
  return (
    <main id="main" class="signin">
      <form class="card" onSubmit={onSubmit}>
        <h1>Set your password</h1>
        {token === null ? (
          <p class="error" role="alert">
            This page needs the link you were given (it ends with <code>#token=…</code>). Ask the instance admin for a new one.
          </p>
        ) : (
          <>
            <p class="hint">The link works once. Setting the password signs you in and ends any other session of yours.</p>
            <label>
              <span>New password (at least {PASSWORD_MIN} characters)</span>
              <input name="password" type="password" autocomplete="new-password" minLength={PASSWORD_MIN} required autofocus />
            </label>
            <label>
              <span>The same again</span>
              <input name="again" type="password" autocomplete="new-password" minLength={PASSWORD_MIN} required />
            </label>
            <ErrorText error={error.value} />
            <button type="submit" class="primary" disabled={busy.value}>
              {busy.value ? 'Setting…' : 'Set password and sign in'}
            </button>
          </>
        )}
      </form>
    </main>
  );
}
