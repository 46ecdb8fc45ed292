/** The pages about people, in one chunk the dashboard loads when one of them opens. */
export { AccountPage } from './account-page.tsx';
export { AuditPage } from './audit-page.tsx';
export { TeamPage } from './team-page.tsx';
export { TeamsPage } from './teams-page.tsx';
export { UsersPage } from './users-page.tsx';
