/**
 * The frame of every signed-in page: navigation, the live stream's state, the time format
 * switch, sign out. At phone width the header keeps one line (the brand, what fires, the
 * live state) and the pages and tools open from its menu button.
 */
import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { streamState, type StreamState } from '../api/stream.ts';
import { absoluteTimes, toggleAbsoluteTimes } from '../lib/clock.ts';
import { route } from '../router.ts';
import { readsAudit } from '../lib/roles.ts';
import { signOut, teams, user } from '../session.ts';
import { Link } from './link.tsx';
import { FiringBadge } from './firing-badge.tsx';
import { CommandToasts } from './command-toasts.tsx';

const STREAM_LABEL: Record<StreamState, string> = {
  off: 'Live updates off',
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
};

export function AppShell({ children }: { children: ComponentChildren }) {
  const path = route.value.path;
  const pages: Array<[string, string]> = [
    ['/jobs', 'Jobs'],
    ['/queues', 'Queues'],
    ['/workers', 'Workers'],
    ['/task-metrics', 'Metrics'],
    ['/alerts', 'Alerts'],
    ['/connections', 'Connections'],
    ['/teams', 'Teams'],
  ];
  if (user.value?.isAdmin) pages.push(['/users', 'Users']);
  if (readsAudit()) pages.push(['/audit', 'Audit']);
  const inNoTeam = teams.value.every((team) => team.role === null);
  const menu = useSignal(false);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class={`top${menu.value ? ' open' : ''}`}>
        <Link href="/jobs" class="brand">
          jobwatch
        </Link>
        {/* choosing a page closes the menu */}
        <nav aria-label="Pages" onClick={() => (menu.value = false)}>
          {pages.map(([href, label]) => (
            <Link key={href} href={href} aria-current={path === href || path.startsWith(href + '/') ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <div class="top-tools">
          <FiringBadge />
          <span class={`stream stream-${streamState.value}`} role="status" title="Live updates from /api/events/stream">
            {STREAM_LABEL[streamState.value]}
          </span>
          <button type="button" class="small menu" aria-expanded={menu.value} onClick={() => (menu.value = !menu.value)}>
            Menu
          </button>
        </div>
        <div class="top-tools more">
          <button type="button" class="small" onClick={toggleAbsoluteTimes} aria-pressed={absoluteTimes.value}>
            {absoluteTimes.value ? 'Absolute times' : 'Relative times'}
          </button>
          <Link href="/account" class="muted user-email" aria-current={path === '/account' ? 'page' : undefined}>
            {user.value?.email}
          </Link>
          <button type="button" class="small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        {inNoTeam && !path.startsWith('/teams') && path !== '/account' && path !== '/users' && path !== '/audit' && (
          <p class="notice" role="status">
            You are in no team yet, so there is no data to show: an admin of a team adds you to it{user.value?.isAdmin ? ' (as the instance admin, you may add yourself on the Teams page)' : ''}.
          </p>
        )}
        {children}
      </main>
      <CommandToasts />
    </>
  );
}
