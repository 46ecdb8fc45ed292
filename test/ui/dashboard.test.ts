/**
 * The dashboard in a real browser against the real service: sign in, create a connection,
 * watch jobs arrive live, filter them, open one, act on a selection, read the queues'
 * chart and a worker going offline. Every wait is bounded; no timing is asserted.
 * Screenshots of each page, light and dark, land in .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { join } from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ingest, makeDataDir, REPO_ROOT, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { buildUi } from '../../ui/build.ts';
import { jobEvent, workerEvent } from '../support/events.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, UI_WAIT_MS, type DashboardPage } from './browser.ts';
import { realisticJobEvents, stackTraceOf, workerEvents } from './dashboard-data.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let light: DashboardPage;
let page: Page;
let connection: { id: string; apiKey: string };

/** Problems a healthy page may show: the first "who am I" before signing in. */
const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);

beforeAll(async () => {
  await buildUi(() => undefined); // the page under test is the current source, even when run alone
  dataDir = makeDataDir('dashboard');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  browser = await launchChromium();
  light = await openPage(browser, service.baseUrl);
  page = light.page;
}, TEST_TIMEOUT_MS);

// one service and one browser for the whole walk through (the steps build on each other)
afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

const rowOf = (externalId: string) => page.locator('tbody tr', { hasText: externalId });
const send = async (events: unknown[]) => {
  const reply = await ingest(service.baseUrl, connection.apiKey, events);
  expect(reply.body.rejected).toBe(0);
};

describe('dashboard in Chromium', () => {
  test('sign in through the form; with no connection the jobs page says what to do', async () => {
    await page.goto('/queues');
    await page.getByLabel('Email').waitFor();
    expect(page.url()).toContain('/signin?next=%2Fqueues');
    await screenshot(page, 'signin-light');
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/invalid email or password/i);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/queues$/);
    await page.goto('/jobs');
    await page.getByText('No connection yet').waitFor();
  }, TEST_TIMEOUT_MS);

  test('create a connection: the key is shown once with the agent command; the list shows it', async () => {
    await page.getByRole('link', { name: 'create one' }).click();
    await page.getByLabel('New connection name').fill('production');
    await page.getByRole('button', { name: 'Create connection' }).click();
    const apiKey = (await page.getByTestId('api-key').textContent())!.trim();
    expect(apiKey).toMatch(/^sk_/);
    const listed = (await (await page.request.get('/api/connections')).json()) as { data: Array<{ id: string; name: string }> };
    connection = { id: listed.data[0]!.id, apiKey };
    // the agent finds its connection from the key: the command names the key and this service's address
    expect(await page.getByTestId('agent-command').textContent()).toBe(`jobwatch-celery \\\n  --broker redis://localhost:6379/0 \\\n  --url ${service.baseUrl} \\\n  --api-key ${apiKey}`);
    await page.locator('table[aria-label="Connections"] tbody tr', { hasText: 'production' }).waitFor();
    await screenshot(page, 'connections-light');

    // a second one, deleted after confirming; a taken name is refused in words
    await page.getByLabel('New connection name').fill('staging');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.locator('table[aria-label="Connections"] tbody tr', { hasText: 'staging' }).waitFor();
    await page.getByLabel('New connection name').fill('production');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('alert').filter({ hasText: /production/ }).waitFor();
    await page.getByRole('button', { name: 'Delete staging' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete connection' }).click();
    await page.locator('table[aria-label="Connections"] tbody tr', { hasText: 'staging' }).waitFor({ state: 'detached' });
    expect(await page.locator('table[aria-label="Connections"] tbody tr').count()).toBe(1);
  }, TEST_TIMEOUT_MS);

  test('jobs arrive live while the page is open, and the tabs count them', async () => {
    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByText('No jobs match').waitFor();
    await page.locator('.stream-live').waitFor();
    await send(realisticJobEvents(connection.id, Date.now(), 40));
    await page.locator('tbody tr').nth(39).waitFor();
    await send([jobEvent(connection.id, Date.now(), { externalId: 'live-arrival-1', name: 'emails.send_welcome', queue: 'emails' })]);
    await rowOf('live-arrival-1').waitFor();
    expect(await page.locator('tbody tr').first().textContent()).toContain('live-arrival-1');
    await page.waitForFunction(() => document.querySelector('.state-tab-all .count')?.textContent === '41', undefined, { timeout: UI_WAIT_MS });
    await screenshot(page, 'jobs-light');
    // `README_SCREENSHOT=1 bun test test/ui/dashboard.test.ts` refreshes the picture in the README and docs/dashboard.md
    if (process.env.README_SCREENSHOT === '1') await page.screenshot({ path: join(REPO_ROOT, 'docs', 'screenshots', 'jobs.png') });
  }, TEST_TIMEOUT_MS);

  test('pausing holds new rows back behind an "N new" button', async () => {
    await page.getByLabel('Pause live rows').check();
    await send([jobEvent(connection.id, Date.now(), { externalId: 'while-paused-1', name: 'images.resize' })]);
    await page.getByRole('button', { name: /1 new/ }).waitFor();
    expect(await rowOf('while-paused-1').count()).toBe(0);
    await page.getByRole('button', { name: /1 new/ }).click();
    await rowOf('while-paused-1').waitFor();
    await page.getByLabel('Pause live rows').uncheck();
  }, TEST_TIMEOUT_MS);

  test('search and filters narrow the list and live in the address', async () => {
    await page.getByLabel('Search task name').fill('RESIZE');
    await page.waitForURL(/search=RESIZE/);
    await page.waitForFunction(() => [...document.querySelectorAll('tbody tr')].every((row) => row.textContent!.includes('images.resize')) && document.querySelectorAll('tbody tr').length > 0, undefined, { timeout: UI_WAIT_MS });
    const total = await (await page.request.get('/api/jobs?search=resize&limit=1')).json();
    await page.getByText(`${total.pagination.total} matching`).waitFor();

    await page.getByLabel('Search task name').fill('');
    await page.getByLabel('Queue').fill('billing');
    await page.waitForURL(/queue=billing/);
    await page.waitForFunction(() => [...document.querySelectorAll('tbody tr')].every((row) => row.children[3]!.textContent === 'billing') && document.querySelectorAll('tbody tr').length > 0, undefined, { timeout: UI_WAIT_MS });
    await page.getByRole('link', { name: /^failed/i }).click();
    await page.waitForURL(/state=failed/);
    await page.waitForFunction(() => [...document.querySelectorAll('tbody tr')].every((row) => row.textContent!.includes('failed')), undefined, { timeout: UI_WAIT_MS });

    // the address alone restores the view (bookmark, reload)
    await page.reload();
    expect(await page.getByLabel('Queue').inputValue()).toBe('billing');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((url) => !url.search.includes('queue='));
  }, TEST_TIMEOUT_MS);

  test("a job's detail shows its history in order, the traceback and the retry outcome", async () => {
    const t0 = Date.now() - 5_000;
    const job = { externalId: 'history-1', name: 'billing.charge_invoice', queue: 'billing', workerId: 'celery@web-1' };
    const error = 'CardDeclined: card ending 4242 was declined';
    // sent out of order: the history is ordered by time, not by arrival
    await send([
      jobEvent(connection.id, t0 + 2_500, { ...job, state: 'failed', error, stacktrace: stackTraceOf(error), extensions: { celery: { retries: 0 } } }),
      jobEvent(connection.id, t0, { ...job, state: 'queued' }),
      jobEvent(connection.id, t0 + 1_200, { ...job, state: 'active' }),
    ]);
    await page.goto('/jobs');
    await rowOf('history-1').getByRole('link', { name: 'billing.charge_invoice' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    const timeline = page.getByRole('list', { name: 'State history' });
    await timeline.waitFor();
    expect(await timeline.locator('.badge').allTextContents()).toEqual(['queued', 'active', 'failed']);
    expect(await timeline.locator('.gap').allTextContents()).toEqual(['1.2 s until active', '1.3 s until failed', 'current']);
    expect(await page.locator('pre', { hasText: 'Traceback (most recent call last)' }).count()).toBe(1);

    // a failed job cannot be revoked: not offered, and the control says why
    expect(await page.getByRole('button', { name: 'Revoke' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Revoke' }).getAttribute('title')).toBe('only active or queued jobs can be revoked');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry' }).click();
    await page.getByText('retry requested, waiting for the agent.').waitFor();
    await page.locator('.page-head .badge.requested', { hasText: 'retry requested' }).waitFor();
    await screenshot(page, 'job-detail-light');

    // the agent reports that it could not carry the retry out; the page says why
    const agent = { authorization: `Bearer ${connection.apiKey}`, 'content-type': 'application/json' };
    const pending = (await (await fetch(`${service.baseUrl}/api/agent/commands`, { headers: agent })).json()) as { data: Array<{ id: string; type: string }> };
    const retry = pending.data.find((command) => command.type === 'retry')!;
    const reason = 'task billing.charge_invoice is not registered';
    const acked = await fetch(`${service.baseUrl}/api/agent/commands/ack`, { method: 'POST', headers: agent, body: JSON.stringify({ outcomes: [{ id: retry.id, status: 'failed', reason }] }) });
    expect(acked.status).toBe(200);
    // live, without a reload: the job is failed again, and the page says why
    await page.getByRole('alert').filter({ hasText: `retry refused: ${reason}` }).waitFor();
    await page.locator('.page-head .badge.state-failed').waitFor();
  }, TEST_TIMEOUT_MS);

  test('a retry the agent carried out that fails again: the page says the run was added by hand, and no stale "waiting for the agent"', async () => {
    const t0 = Date.now() - 20_000;
    const job = { externalId: 'retried-by-hand', name: 'billing.refund', queue: 'billing', workerId: 'celery@web-2', maxRetries: 1 };
    await send([
      jobEvent(connection.id, t0, { ...job, state: 'active', attempt: 2, startedAt: new Date(t0).toISOString() }),
      jobEvent(connection.id, t0 + 1_000, { ...job, state: 'failed', attempt: 2, startedAt: new Date(t0).toISOString(), completedAt: new Date(t0 + 1_000).toISOString(), error: 'GatewayTimeout: first' }),
    ]);
    await page.goto('/jobs');
    await rowOf('retried-by-hand').getByRole('link', { name: 'billing.refund' }).click();
    await page.locator('.page-head .badge', { hasText: 'failed' }).waitFor();
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry' }).click();
    await page.getByText('retry requested, waiting for the agent.').waitFor();

    // the agent re-queues it, the job system runs it once more and it fails again
    const agent = { authorization: `Bearer ${connection.apiKey}`, 'content-type': 'application/json' };
    const pending = (await (await fetch(`${service.baseUrl}/api/agent/commands`, { headers: agent })).json()) as { data: Array<{ id: string; externalId: string }> };
    const retry = pending.data.find((command) => command.externalId === 'retried-by-hand')!;
    expect((await fetch(`${service.baseUrl}/api/agent/commands/ack`, { method: 'POST', headers: agent, body: JSON.stringify({ ids: [retry.id] }) })).status).toBe(200);
    const t1 = Date.now();
    await send([
      jobEvent(connection.id, t1, { ...job, state: 'active', attempt: 3, startedAt: new Date(t1).toISOString() }),
      jobEvent(connection.id, t1 + 500, { ...job, state: 'failed', attempt: 3, startedAt: new Date(t1).toISOString(), completedAt: new Date(t1 + 500).toISOString(), error: 'GatewayTimeout: again' }),
    ]);
    await page.locator('.page-head .badge', { hasText: 'failed' }).waitFor();
    await page.locator('p.notice', { hasText: 'carried out by the agent' }).waitFor();
    expect(await page.getByText(/waiting for the agent/).count()).toBe(0);
    const field = (label: string) => page.locator('dl.fields div', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) }).locator('dd');
    expect(await field('Attempt').textContent()).toBe('3 (1 run added by hand)');
    expect(await field('Retry limit').textContent()).toBe('1 retry (2 attempts)');
    expect(await page.getByText(/ of 2/).count()).toBe(0);
    await screenshot(page, 'job-detail-retried-by-hand');
  }, TEST_TIMEOUT_MS);

  test('bulk revoke of a selection changes the rows and reports each job', async () => {
    await page.goto('/jobs?state=queued');
    await page.locator('tbody tr').nth(1).waitFor();
    const picked = await page.locator('tbody tr').evaluateAll((rows) => rows.slice(0, 2).map((row) => row.getAttribute('data-id')!));
    for (const id of picked) await page.locator(`tr[data-id="${id}"] input[type=checkbox]`).check();
    await page.getByText('2 selected').waitFor();
    await page.getByRole('button', { name: 'Revoke selected' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('2 of 2 requested').waitFor();
    // the contract's answer is cancelled; until the agent reports, the rows say what is true: requested
    for (const id of picked) await page.locator(`tr[data-id="${id}"] .badge.requested`, { hasText: 'revoke requested' }).waitFor();
    const states = await Promise.all(picked.map(async (id) => ((await (await page.request.get(`/api/jobs/${id}`)).json()) as { state: string }).state));
    expect(states).toEqual(['cancelled', 'cancelled']);
  }, TEST_TIMEOUT_MS);

  test('the queues page lists the queues; a chart opens on demand', async () => {
    await page.goto('/queues?range=1h');
    const row = page.locator('table[aria-label="Queues"] tbody tr', { hasText: 'billing' });
    await row.waitFor();
    const charts = page.locator('[data-testid="queue-chart"] svg');
    expect(await charts.count()).toBe(0);
    await page.getByRole('button', { name: 'Chart of billing' }).click();
    await charts.first().waitFor();
    expect(await charts.count()).toBe(1);
    const chart = charts.first();
    const size = await chart.boundingBox();
    expect(size!.width).toBeGreaterThan(100);
    expect(size!.height).toBeGreaterThan(50);
    // the chart draws what the health bar counts, and its steps rise where jobs finished
    const counted = (await row.locator('.health').getAttribute('aria-label'))!.match(/(\d+) succeeded, (\d+) failed/)!;
    expect(await chart.getAttribute('aria-label')).toContain(`${counted[1]} succeeded, ${counted[2]} failed`);
    expect(Number(counted[1])).toBeGreaterThan(0);
    const rise = await chart.locator('.succeeded .edge').evaluate((path) => (path as SVGPathElement).getBBox().height);
    expect(rise).toBeGreaterThan(10);
    await screenshot(page, 'queues-light');
  }, TEST_TIMEOUT_MS);

  test('a worker shows online, then offline once its heartbeats stop', async () => {
    await page.goto('/workers');
    await page.getByText('No workers').waitFor();
    await send([workerEvent(connection.id, Date.now(), { externalId: 'celery@lonely', hostname: 'lonely-host', state: 'online', concurrency: 4, queues: ['default'] })]);
    const row = page.locator('tbody tr', { hasText: 'lonely-host' });
    await row.locator('.badge', { hasText: 'online' }).waitFor();
    await screenshot(page, 'workers-light');
    await row.locator('.badge', { hasText: 'offline' }).waitFor({ timeout: 20_000 });
  }, TEST_TIMEOUT_MS);

  test('the admin invites a user', async () => {
    await page.goto('/users');
    await page.getByLabel('Email').fill('dev@example.test');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('cell', { name: 'dev@example.test' }).waitFor();
    await page.getByTestId('password-link').waitFor();
    // the same email again: the envelope's message, in words
    await page.getByLabel('Email').fill('dev@example.test');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('alert').filter({ hasText: /already/i }).waitFor();
    await screenshot(page, 'users-light');
  }, TEST_TIMEOUT_MS);

  test('the stream shows it is reconnecting while the service restarts, then resumes', async () => {
    await page.goto('/jobs');
    await page.locator('.stream-live').waitFor();
    const port = service.port;
    const problemsBefore = light.problems.length;
    await service.stop();
    await page.getByRole('status').filter({ hasText: 'Reconnecting' }).waitFor();
    // the same port, just released by the service, so the open page can find it again
    service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, PORT: String(port) } });
    await page.locator('.stream-live').waitFor({ timeout: 20_000 });
    // failed requests while the service was down are expected, not problems of the page
    const whileDown = light.problems.splice(problemsBefore);
    if (whileDown.length > 0) console.log(`while the service was down: ${whileDown.join(' | ')}`);
    await send([jobEvent(connection.id, Date.now(), { externalId: 'after-restart-1', name: 'emails.send_welcome' })]);
    await rowOf('after-restart-1').waitFor();
  }, TEST_TIMEOUT_MS);

  test('an ended session sends the user to sign in', async () => {
    await page.goto('/jobs');
    await page.locator('tbody tr').first().waitFor();
    await light.context.clearCookies();
    await page.getByRole('link', { name: 'Queues' }).click();
    await page.getByText('Your session has ended').waitFor();
    expect(page.url()).toContain('/signin?next=%2Fqueues');
  }, TEST_TIMEOUT_MS);

  test('every page in dark mode and at phone width, with no console error or CSP violation', async () => {
    await send(workerEvents(connection.id, Date.now()));
    for (const [scheme, width] of [['dark', 1280], ['light', 390]] as const) {
      const view = await openPage(browser, service.baseUrl, { colorScheme: scheme, width });
      await signInThroughForm(view.page, ADMIN_EMAIL, ADMIN_PASSWORD);
      const suffix = width < 500 ? `${scheme}-phone` : scheme;
      await view.page.locator('tbody tr').first().waitFor();
      await screenshot(view.page, `jobs-${suffix}`);
      await view.page.locator('tbody tr').first().getByRole('link').first().click();
      await view.page.getByRole('list', { name: 'State history' }).waitFor();
      await screenshot(view.page, `job-detail-${suffix}`);
      for (const [path, ready] of [['/queues', 'tbody tr'], ['/workers', 'tbody tr'], ['/connections', 'tbody tr'], ['/users', 'tbody tr']] as const) {
        await view.page.goto(path);
        await view.page.locator(ready).first().waitFor();
        await screenshot(view.page, `${path.slice(1)}-${suffix}`);
      }
      const overflow = await view.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      expect(view.problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
      await view.context.close();
    }
    expect(light.problems.filter((problem) => !expectedProblem(problem) && !/HTTP 409|HTTP 401|status of 40[19]/.test(problem))).toEqual([]);
  }, 60_000);
});
