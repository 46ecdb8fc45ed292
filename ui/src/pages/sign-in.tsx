/**
 * Sign in with email and password, or through single sign-on when the service has it;
 * then back to the page that asked for it. A single sign-on that was refused comes back
 * here with the reason, said in words.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../api/client.ts';
import { ErrorText } from '../components/error-text.tsx';
import { navigate, route } from '../router.ts';
import { nextAddress, sessionNotice, signIn } from '../session.ts';

const SSO_REFUSALS: Record<string, string> = {
  state: 'The single sign-on did not match one this browser started (an old, reused or forged link). Start again.',
  provider: 'The identity provider refused the sign-in.',
  token: "The identity provider's answer could not be verified, so nothing was signed in.",
  unavailable: 'The identity provider cannot be reached right now.',
  refused: 'Single sign-on was refused.',
};

export function SignInPage() {
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const methods = useSignal<{ password: boolean; sso: boolean }>({ password: true, sso: false });
  useEffect(() => {
    void api<{ password: boolean; sso: boolean }>('GET', '/api/auth/methods').then((answer) => (methods.value = answer)).catch(() => undefined);
  }, []);
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
  const refusal = route.value.query.get('sso');
  const reason = route.value.query.get('reason');
  return (
    <main id="main" class="signin">
      <div class="card">
        <h1>Sign in to jobwatch</h1>
        {sessionNotice.value && <p class="notice">{sessionNotice.value}</p>}
        {refusal !== null && (
          <p class="error" role="alert">
            {SSO_REFUSALS[refusal] ?? SSO_REFUSALS.refused} {reason !== null && <span class="muted">({reason})</span>}
          </p>
        )}
        {methods.value.sso && (
          <a class="button primary" href={`/api/auth/oidc/start?next=${encodeURIComponent(nextAddress())}`}>
            Sign in with SSO
          </a>
        )}
        {methods.value.sso && methods.value.password && <p class="divider">or with a password</p>}
        {methods.value.password ? (
          <form onSubmit={onSubmit} class="stack">
            <label>
              <span>Email</span>
              <input name="email" type="email" autocomplete="username" required autofocus={!methods.value.sso} />
            </label>
            <label>
              <span>Password</span>
              <input name="password" type="password" autocomplete="current-password" required />
            </label>
            <ErrorText error={error.value} />
            <button type="submit" class={methods.value.sso ? '' : 'primary'} disabled={busy.value}>
              {busy.value ? 'Signing in…' : 'Sign in'}
            </button>
            <p class="hint">
              First start? The service created <code>admin@localhost</code> (or <code>ADMIN_EMAIL</code>) and printed its one-time password in
              its log. Change it on your Account page.
            </p>
          </form>
        ) : (
          <p class="hint">Password sign-in is turned off here: use single sign-on.</p>
        )}
      </div>
    </main>
  );
}
