/**
 * Saved views on the jobs page in Chromium: an operator saves the filters on screen for the
 * team; a viewer of the team sees the view, opens the list it keeps through its link, and
 * finds Save view disabled with the reason; the operator deletes it after a confirm step.
 * Desktop and phone width. Screenshots in .tmp/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { jobEvent } from '../support/events.ts';
import { ADMIN, testApp, type TestApp } from '../support/test-app.ts';
import { launchChromium, openPage, screenshot, signInThroughForm } from './browser.ts';

let browser: Browser;
let t: TestApp;
let baseUrl: string;
const PASSWORD = 'a long password for views';

beforeAll(async () => {
  await buildUi(() => undefined);
  t = await testApp({ nowMs: Date.now() });
  const admin = await t.login();
  const connection = await t.createConnection(admin, 'production');
  const teamId = t.engine.accounts.connections.get(connection.id)!.teamId!;
  for (const [email, role] of [['olga@example.com', 'operator'], ['vic@example.com', 'viewer']] as const) {
    await t.createUser(admin, email, PASSWORD, { team: false });
    await t.request('POST', `/api/teams/${teamId}/members`, { body: { email, role }, headers: { cookie: admin } });
  }
  const now = Date.now();
  await t.ingest(connection.apiKey, [
    jobEvent(connection.id, now - 5_000, { externalId: 'mail-1', name: 'mail.send', queue: 'emails', state: 'failed', error: 'SMTP 550' }),
    jobEvent(connection.id, now - 4_000, { externalId: 'mail-2', name: 'mail.send', queue: 'emails', state: 'completed' }),
    jobEvent(connection.id, now - 3_000, { externalId: 'img-1', name: 'images.resize', queue: 'media', state: 'failed', error: 'too large' }),
  ]);
  baseUrl = t.serve().baseUrl;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.app.stop();
});

const unexpected = (problems: string[]) => problems.filter((problem) => !/HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem));

test('an operator saves the filters on screen; a viewer opens them through the link and may not save; the operator deletes the view', async () => {
  const operator = await openPage(browser, baseUrl);
  await signInThroughForm(operator.page, 'olga@example.com', PASSWORD);
  await operator.page.goto('/jobs?state=failed&queue=emails');
  await operator.page.getByRole('button', { name: 'Save view' }).click();
  await operator.page.getByText('Keeps: state=failed, queue=emails').waitFor();
  await operator.page.getByLabel('View name').fill('Failed emails');
  await operator.page.getByRole('button', { name: 'Save', exact: true }).click();
  const link = operator.page.getByRole('region', { name: 'Saved views' }).getByRole('link', { name: 'Failed emails' });
  await link.waitFor();
  expect(await link.getAttribute('aria-current')).toBe('page');
  await screenshot(operator.page, 'saved-views-operator-desktop');

  for (const width of [1280, 390]) {
    const viewer = await openPage(browser, baseUrl, { width });
    await signInThroughForm(viewer.page, 'vic@example.com', PASSWORD);
    await viewer.page.goto('/jobs');
    const views = viewer.page.getByRole('region', { name: 'Saved views' });
    expect(await views.getByRole('button', { name: 'Save view' }).isDisabled()).toBe(true);
    await views.getByText('Saving a view needs the operator role in a team').waitFor();
    expect(await views.getByRole('button', { name: /^Delete view/ }).count()).toBe(0);
    await views.getByRole('link', { name: 'Failed emails' }).click();
    await viewer.page.waitForURL(/\/jobs\?state=failed&queue=emails$/);
    await viewer.page.locator('tbody tr', { hasText: 'mail-1' }).waitFor();
    expect(await viewer.page.locator('tbody tr').count()).toBe(1);
    await screenshot(viewer.page, `saved-views-viewer-${width === 390 ? 'phone' : 'desktop'}`);
    expect(unexpected(viewer.problems)).toEqual([]);
    await viewer.context.close();
  }

  await operator.page.getByRole('button', { name: 'Delete view Failed emails' }).click();
  await operator.page.getByRole('button', { name: 'Delete view', exact: true }).click();
  await operator.page.getByText('none saved yet').waitFor();
  expect(unexpected(operator.problems)).toEqual([]);
  await operator.context.close();
  expect(t.engine.accounts.views.size).toBe(0);
}, 120_000);

test('the instance admin, in no team but their own, sees no view of the production team', async () => {
  const { page, context } = await openPage(browser, baseUrl);
  await signInThroughForm(page, ADMIN.email, ADMIN.password);
  await page.goto('/jobs');
  await page.getByRole('region', { name: 'Saved views' }).waitFor();
  expect(await page.getByRole('region', { name: 'Saved views' }).getByRole('link').count()).toBe(0);
  await context.close();
}, 60_000);
