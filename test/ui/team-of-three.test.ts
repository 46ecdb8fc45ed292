/**
 * A team of three shares one production connection, end to end in Chromium: the instance
 * admin signs in, makes the team and invites its admin (the invitation link sets her
 * password and signs her in); she creates the connection and adds a viewer; an operator
 * signs in through single sign-on at a real provider on loopback (its login and consent
 * pages), his team and role coming from his groups. Jobs arrive through the API key. The
 * operator revokes a job; the viewer sees the same jobs with the actions disabled and why;
 * the team admin reads the audit log of it all. Someone whose groups give no team gets the
 * no-access page. Screenshots of each page at desktop and phone width land in
 * .tmp/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { jobEvent } from '../support/events.ts';
import { CLIENT_ID, CLIENT_SECRET, startOidcProvider, type TestProvider } from '../support/oidc-provider.ts';
import { ADMIN, T0, testApp, type TestApp } from '../support/test-app.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, UI_WAIT_MS } from './browser.ts';

const PHONE = 390;
let browser: Browser;
let provider: TestProvider;
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  await probe.stop(true);
  baseUrl = `http://127.0.0.1:${port}`;
  provider = await startOidcProvider([`${baseUrl}/api/auth/oidc/callback`], {
    omar: { email: 'omar@example.com', groups: ['ops'] },
    mallory: { email: 'mallory@example.com', groups: ['marketing'] },
  });
  t = await testApp({
    nowMs: Date.now(),
    sso: { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_GROUP_MAP: 'ops=production:operator', OIDC_SCOPES: 'openid email groups', OIDC_ALLOW_HTTP: 'true' },
  });
  t.app.listen({ port, hostname: '127.0.0.1' });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.app.stop();
  await provider?.stop();
});

/** Takes the page at desktop width, then at phone width. */
async function shots(page: Page, name: string): Promise<void> {
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize({ width: PHONE, height: 800 });
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

test('a team of three shares one production connection: an invited admin, a viewer, and an operator through single sign-on', async () => {
  // the instance admin makes the team and invites its admin
  const root = await openPage(browser, baseUrl);
  await signInThroughForm(root.page, ADMIN.email, ADMIN.password);
  await root.page.goto('/teams');
  await root.page.getByLabel('New team').fill('production');
  await root.page.getByRole('button', { name: 'Create team' }).click();
  await root.page.getByRole('link', { name: 'production' }).waitFor();
  await shots(root.page, 'teams');
  await root.page.goto('/users');
  await root.page.getByLabel('Email').fill('lead@example.com');
  await root.page.getByLabel('Team').selectOption({ label: 'production' });
  await root.page.getByLabel('Role').selectOption('admin');
  await root.page.getByRole('button', { name: 'Invite' }).click();
  const link = await root.page.getByTestId('password-link').textContent();
  expect(link).toMatch(/\/set-password#token=/);
  await shots(root.page, 'users');

  // the invitation sets the team admin's password and signs her in; she creates the connection and adds a viewer
  const lead = await openPage(browser, baseUrl);
  await lead.page.goto(link!.slice(baseUrl.length));
  await lead.page.getByLabel('New password (at least 12 characters)').fill('lead long password');
  await lead.page.getByLabel('The same again').fill('lead long password');
  await shots(lead.page, 'set-password');
  await lead.page.getByRole('button', { name: 'Set password and sign in' }).click();
  await lead.page.waitForURL(/\/jobs/);
  await lead.page.goto('/connections');
  await lead.page.getByLabel('New connection name').fill('prod');
  await lead.page.getByRole('button', { name: 'Create connection' }).click();
  const apiKey = await lead.page.getByTestId('api-key').textContent();
  expect(apiKey).toMatch(/^sk_/);
  const connectionId = t.engine.accounts.connectionByKey(apiKey!)!.id;
  await t.ingest(apiKey!, [jobEvent(connectionId, T0, { externalId: 'report-1', name: 'tasks.report', state: 'queued' }), jobEvent(connectionId, T0, { externalId: 'report-2', name: 'tasks.report', state: 'failed' })]);
  await t.userWithSession('viewer@example.com');
  const viewerUser = t.engine.accounts.userByEmail('viewer@example.com')!;
  await t.users.setPassword(viewerUser.id, 'viewer long password');
  const teamId = t.engine.accounts.teams.teamByName('production')!.id;
  await lead.page.goto(`/teams/${teamId}`);
  await lead.page.getByLabel('Add a member by email').fill('viewer@example.com');
  await lead.page.getByRole('button', { name: 'Add member' }).click();
  await lead.page.getByLabel('Role of viewer@example.com').waitFor();
  await shots(lead.page, 'team');

  // the operator signs in through single sign-on: the provider's login and consent pages, then back, in production as operator
  const omar = await openPage(browser, baseUrl);
  await omar.page.goto('/signin');
  await shots(omar.page, 'signin-sso');
  await omar.page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await omar.page.locator('input[name="login"]').fill('omar');
  await omar.page.locator('input[name="password"]').fill('anything');
  await omar.page.getByRole('button', { name: 'Sign-in' }).click();
  await omar.page.getByRole('button', { name: 'Continue' }).click();
  await omar.page.waitForURL(/\/jobs/);
  await omar.page.getByText('tasks.report').first().waitFor();
  const queuedId = t.engine.connection(connectionId)!.jobs.getByExternalId('report-1')!.id;
  await omar.page.goto(`/jobs/${queuedId}`);
  await omar.page.getByRole('button', { name: 'Revoke' }).click();
  await omar.page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
  await omar.page.getByRole('status').filter({ hasText: 'revoke requested, waiting for the agent' }).waitFor();
  expect(t.engine.connection(connectionId)!.jobs.getByExternalId('report-1')!.state).toBe('cancelled');

  // the viewer reads the same jobs; the actions are disabled, saying why
  const viewer = await openPage(browser, baseUrl);
  await signInThroughForm(viewer.page, 'viewer@example.com', 'viewer long password');
  await viewer.page.getByText('tasks.report').first().waitFor();
  const failedId = t.engine.connection(connectionId)!.jobs.getByExternalId('report-2')!.id;
  await viewer.page.goto(`/jobs/${failedId}`);
  const retry = viewer.page.getByRole('button', { name: 'Retry' });
  await retry.waitFor();
  expect(await retry.isDisabled()).toBe(true);
  expect(await retry.getAttribute('title')).toBe('To act on jobs you need the operator role in team production; yours is viewer.');
  await shots(viewer.page, 'job-as-viewer');
  await viewer.page.goto('/connections');
  expect(await viewer.page.getByRole('button', { name: 'Delete prod' }).isDisabled()).toBe(true);
  await viewer.page.getByText('Only an admin of a team creates its connections').waitFor();

  // the team admin reads what happened, the operator's revoke among it
  await lead.page.goto('/audit');
  await lead.page.getByText('job.revoke').first().waitFor();
  await lead.page.getByText('omar@example.com').first().waitFor();
  await shots(lead.page, 'audit');
  await lead.page.goto('/account');
  await shots(lead.page, 'account');

  // someone whose groups give no team: the no-access page, and no session
  const mallory = await openPage(browser, baseUrl);
  await mallory.page.goto('/signin');
  await mallory.page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await mallory.page.locator('input[name="login"]').fill('mallory');
  await mallory.page.locator('input[name="password"]').fill('anything');
  await mallory.page.getByRole('button', { name: 'Sign-in' }).click();
  await mallory.page.getByRole('button', { name: 'Continue' }).click();
  await mallory.page.waitForURL(/\/no-access/);
  await mallory.page.getByRole('heading', { name: 'No access to jobwatch' }).waitFor({ timeout: UI_WAIT_MS });
  await shots(mallory.page, 'no-access');
  expect((await mallory.context.cookies()).some((cookie) => cookie.name === 'session')).toBe(false);

  for (const [session, visitedProvider] of [[root, false], [lead, false], [omar, true], [viewer, false]] as const) {
    // before signing in the dashboard asks who is signed in (401: nobody); the provider's pages load a
    // font from the internet (which this machine cannot reach) and ask for a favicon it has not
    const expected = (problem: string) =>
      problem === 'HTTP 401 GET /api/auth/me' || problem.includes('401 (Unauthorized)') || (visitedProvider && problem.startsWith('console: Failed to load resource'));
    expect(session.problems.filter((problem) => !expected(problem))).toEqual([]);
  }
}, 240_000);
