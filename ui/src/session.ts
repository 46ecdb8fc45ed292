/** Who is signed in, their teams and connections (with their role on each); an expired session sends the user to sign in. */
import { signal } from '@preact/signals';
import { api, setUnauthorizedHandler } from './api/client.ts';
import { startStream, stopStream } from './api/stream.ts';
import { loadCapabilities } from './lib/capabilities.ts';
import type { Me, PublicConnection, PublicTeam, PublicUser } from './api/types.ts';
import { navigate, route } from './router.ts';

/** undefined while the first check runs; null when signed out. */
export const user = signal<PublicUser | null | undefined>(undefined);
export const connections = signal<PublicConnection[]>([]);
/** the user's teams (every team for the instance admin, with role null where not a member) */
export const teams = signal<PublicTeam[]>([]);
export const sessionNotice = signal<string | null>(null);

export function signInAddress(): string {
  const query = route.value.query.toString();
  const here = route.value.path + (query === '' ? '' : `?${query}`);
  return route.value.path === '/signin' || here === '/' ? '/signin' : `/signin?next=${encodeURIComponent(here)}`;
}

/** Where to go after signing in: the `next` page, only ever a path of this site. */
export function nextAddress(): string {
  const next = route.value.query.get('next') ?? '';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/jobs';
}

/** Pages shown without a session: being signed out does not send them to sign in. */
export const PUBLIC_PATHS: readonly string[] = ['/signin', '/set-password', '/no-access'];

setUnauthorizedHandler(() => {
  if (user.value) sessionNotice.value = 'Your session has ended. Sign in again to continue.';
  user.value = null;
  stopStream();
  if (!PUBLIC_PATHS.includes(route.value.path)) navigate(signInAddress(), { replace: true });
});

export async function loadSession(): Promise<void> {
  try {
    const me = await api<Me>('GET', '/api/auth/me');
    user.value = me.user;
    connections.value = me.connections;
    teams.value = me.teams;
    startStream();
    void loadCapabilities();
  } catch {
    user.value = null;
  }
}

export async function refreshConnections(): Promise<void> {
  const me = await api<Me>('GET', '/api/auth/me');
  connections.value = me.connections;
  teams.value = me.teams;
}

export async function signIn(email: string, password: string): Promise<void> {
  await api('POST', '/api/auth/login', { email, password });
  sessionNotice.value = null;
  await loadSession();
}

export async function signOut(): Promise<void> {
  await api('POST', '/api/auth/logout').catch(() => undefined);
  stopStream();
  user.value = null;
  connections.value = [];
  teams.value = [];
  navigate('/signin');
}
