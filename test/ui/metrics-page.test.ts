/**
 * The Metrics page by role, in Chromium against the real service: an operator of the
 * connection's team opens a task's charts from the table and adds a deploy marker, which
 * is drawn on them; a viewer of the same team comes from a job's detail ("Task metrics"),
 * sees the same charts and marker, and the "Add marker" form disabled with the role it needs.
 * Desktop and phone width; screenshots in .tmp/screenshots/metrics-*.png.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { iso, jobEvent } from '../support/events.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, type DashboardPage } from './browser.ts';

const PASSWORD = 'a long member password';
const VIEWER_REFUSAL = 'To add markers you need the operator role in team default; yours is viewer.';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let connection: { id: string; apiKey: string };
const opened: DashboardPage[] = [];

async function post(cookie: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Jobs of two tasks over the last half hour: each waited, ran and finished (a few failed). */
function jobsOfTwoTasks(connectionId: string): unknown[] {
  const nowMs = Date.now();
  return Array.from({ length: 24 }, (_, i) => {
    const [name, runMs] = i % 2 === 0 ? ['reports.nightly', 2_000 + i * 250] : ['mail.send', 100 + i * 10];
    const endMs = nowMs - 60_000 - i * 60_000;
    const startMs = endMs - runMs;
    const state = i % 7 === 3 ? 'failed' : 'completed';
    return jobEvent(connectionId, endMs, { externalId: `job-${i}`, name, queue: 'default', state, createdAt: iso(startMs - 500), startedAt: iso(startMs), completedAt: iso(endMs) });
  });
}

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('metrics-page');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const admin = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  connection = await createConnection(service.baseUrl, admin, 'production');
  const team = (await getJson(service.baseUrl, '/api/teams', admin)).body.data[0];
  expect(team.name).toBe('default');
  for (const role of ['viewer', 'operator']) {
    await post(admin, '/api/users', { email: `${role}@example.com`, password: PASSWORD });
    await post(admin, `/api/teams/${team.id}/members`, { email: `${role}@example.com`, role });
  }
  const events = jobsOfTwoTasks(connection.id);
  expect((await ingest(service.baseUrl, connection.apiKey, events)).body.accepted).toBe(events.length);
  browser = await launchChromium();
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

async function signedIn(email: string, width = 1280): Promise<Page> {
  const view = await openPage(browser, service.baseUrl, { width });
  opened.push(view);
  await signInThroughForm(view.page, email, PASSWORD);
  await view.page.waitForURL(/\/jobs/);
  return view.page;
}

test("an operator opens a task's charts from the table and adds a deploy marker, drawn on every chart", async () => {
  const page = await signedIn('operator@example.com');
  await page.goto('/task-metrics');
  const row = page.locator('table[aria-label="Tasks"] tbody tr', { hasText: 'reports.nightly' });
  await row.waitFor();
  await screenshot(page, 'metrics-table-operator-desktop');
  await row.getByRole('link', { name: 'reports.nightly' }).click();
  await page.getByRole('heading', { name: 'reports.nightly' }).waitFor();
  // one connection: the form marks it
  const add = page.getByRole('button', { name: 'Add marker' });
  expect(await add.isDisabled()).toBe(false);
  await page.getByLabel('Marker at now').fill('deploy v2');
  await add.click();
  await page.getByRole('status').filter({ hasText: 'Marker added' }).waitFor();
  await page.reload();
  const charts = page.getByTestId('metric-chart');
  await charts.nth(2).waitFor();
  for (let chart = 0; chart < 3; chart++) await charts.nth(chart).getByText('deploy v2', { exact: true }).waitFor();
  await screenshot(page, 'metrics-task-operator-desktop');
  await page.setViewportSize({ width: 390, height: 800 });
  await screenshot(page, 'metrics-task-operator-phone');
}, TEST_TIMEOUT_MS);

test("a viewer comes from a job's detail to its task's charts and the marker, and sees the marker form disabled with the role it needs", async () => {
  for (const [width, suffix] of [[1280, 'desktop'], [390, 'phone']] as const) {
    const page = await signedIn('viewer@example.com', width);
    const admin = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const job = (await getJson(service.baseUrl, `/api/jobs?connectionId=${connection.id}&search=reports.nightly`, admin)).body.data[0];
    await page.goto(`/jobs/${job.id}`);
    await page.getByRole('link', { name: 'Task metrics' }).click();
    await page.getByRole('heading', { name: 'reports.nightly' }).waitFor();
    await page.getByTestId('metric-chart').first().getByText('deploy v2', { exact: true }).waitFor();
    const add = page.getByRole('button', { name: 'Add marker' });
    expect(await add.isDisabled()).toBe(true);
    expect(await add.getAttribute('title')).toBe(VIEWER_REFUSAL);
    expect(await page.getByLabel('Marker at now').isDisabled()).toBe(true);
    await page.getByText(VIEWER_REFUSAL, { exact: true }).waitFor();
    await screenshot(page, `metrics-task-viewer-${suffix}`);
  }
}, TEST_TIMEOUT_MS);

test('no page had an error beyond the sign-in check before signing in', () => {
  const expected = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);
  expect(opened.flatMap((view) => view.problems).filter((problem) => !expected(problem))).toEqual([]);
});
