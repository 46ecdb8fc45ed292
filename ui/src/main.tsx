/** The dashboard's entry: styles, the session check, and the page for the address. */
import './styles.css';
import { render } from 'preact';
import { AppShell } from './components/app-shell.tsx';
import { EmptyState } from './components/empty-state.tsx';
import { Link } from './components/link.tsx';
import { AlertsPage } from './pages/alerts/alerts-page.tsx';
import { ConnectionsPage } from './pages/connections/connections-page.tsx';
import { JobDetailPage } from './pages/job-detail/job-detail-page.tsx';
import { JobsPage } from './pages/jobs/jobs-page.tsx';
import { QueuesPage } from './pages/queues/queues-page.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { UsersPage } from './pages/users-page.tsx';
import { WorkersPage } from './pages/workers/workers-page.tsx';
import { matchPath, navigate, route } from './router.ts';
import { loadSession, nextAddress, signInAddress, user } from './session.ts';

const PAGES: Array<[string, (params: Record<string, string>) => preact.JSX.Element]> = [
  ['/jobs', () => <JobsPage />],
  ['/jobs/:id', (params) => <JobDetailPage id={params.id!} />],
  ['/queues', () => <QueuesPage />],
  ['/workers', () => <WorkersPage />],
  ['/alerts', () => <AlertsPage />],
  ['/connections', () => <ConnectionsPage />],
  ['/users', () => <UsersPage />],
];

function App() {
  const { path } = route.value;
  if (user.value === undefined) return <p class="loading">Loading…</p>;
  if (user.value === null) {
    if (path !== '/signin') queueMicrotask(() => navigate(signInAddress(), { replace: true }));
    return <SignInPage />;
  }
  if (path === '/' || path === '/signin') {
    queueMicrotask(() => navigate(path === '/signin' ? nextAddress() : '/jobs', { replace: true }));
    return null;
  }
  for (const [pattern, page] of PAGES) {
    const params = matchPath(pattern, path);
    if (params !== null) return <AppShell>{page(params)}</AppShell>;
  }
  return (
    <AppShell>
      <EmptyState title="No such page">
        <Link href="/jobs">Go to the jobs</Link>
      </EmptyState>
    </AppShell>
  );
}

void loadSession();
render(<App />, document.getElementById('app')!);
