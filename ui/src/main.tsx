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
import { MetricsPage } from './pages/metrics/metrics-page.tsx';
import { QueuesPage } from './pages/queues/queues-page.tsx';
import { QueuePage } from './pages/queues/queue-page.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { NoAccessPage, SetPasswordPage } from './pages/public-pages.tsx';
import { AccountPage } from './pages/people/account-page.tsx';
import { AuditPage } from './pages/people/audit-page.tsx';
import { TeamPage } from './pages/people/team-page.tsx';
import { TeamsPage } from './pages/people/teams-page.tsx';
import { UsersPage } from './pages/people/users-page.tsx';
import { WorkersPage } from './pages/workers/workers-page.tsx';
import { matchPath, navigate, route } from './router.ts';
import { loadSession, nextAddress, signInAddress, user } from './session.ts';

const PAGES: Array<[string, (params: Record<string, string>) => preact.JSX.Element]> = [
  ['/jobs', () => <JobsPage />],
  ['/jobs/:id', (params) => <JobDetailPage id={params.id!} />],
  ['/queues', () => <QueuesPage />],
  ['/queues/:id', (params) => <QueuePage id={params.id!} />],
  ['/workers', () => <WorkersPage />],
  ['/task-metrics', () => <MetricsPage />],
  ['/alerts', () => <AlertsPage />],
  ['/connections', () => <ConnectionsPage />],
  ['/users', () => <UsersPage />],
  ['/teams', () => <TeamsPage />],
  ['/teams/:id', (params) => <TeamPage id={params.id!} />],
  ['/audit', () => <AuditPage />],
  ['/account', () => <AccountPage />],
];

/** Pages that need no session: their own frame, whoever is signed in. */
const PUBLIC_PAGES: Record<string, () => preact.JSX.Element> = {
  '/no-access': () => <NoAccessPage />,
  '/set-password': () => <SetPasswordPage />,
};

function App() {
  const { path } = route.value;
  const publicPage = PUBLIC_PAGES[path];
  if (publicPage !== undefined) return publicPage();
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
