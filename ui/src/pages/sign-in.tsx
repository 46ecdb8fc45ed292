/** Sign in with email and password; then back to the page that asked for it. */
import { useSignal } from '@preact/signals';
import { ErrorText } from '../components/error-text.tsx';
import { navigate } from '../router.ts';
import { nextAddress, sessionNotice, signIn } from '../session.ts';

export function SignInPage() {
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    busy.value = true;
    error.value = null;
    try {
      await signIn(String(form.get('email')), String(form.get('password')));
      navigate(nextAddress(), { replace: true });
    } catch (failure) {
      error.value = failure;
    } finally {
      busy.value = false;
    }
  };
  return (
    <main id="main" class="signin">
      <form class="card" onSubmit={onSubmit}>
        <h1>Sign in to jobwatch</h1>
        {sessionNotice.value && <p class="notice">{sessionNotice.value}</p>}
        <label>
          <span>Email</span>
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        <label>
          <span>Password</span>
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorText error={error.value} />
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="hint">
          First start? The service created <code>admin@localhost</code> (or <code>ADMIN_EMAIL</code>) and printed its one-time password in
          its log.
        </p>
      </form>
    </main>
  );
}
