/**
 * What a job was called with, in Chromium against the real service: a job's detail shows
 * its arguments (a password masked), result, log lines, progress bar and every attempt with
 * its error and trace; the list shows a running job's progress bar and the current run's
 * error only. Desktop and phone width, light and dark. Screenshots in .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { jobEvent } from '../support/events.ts';
import { stackTraceOf } from './dashboard-data.ts';
import { join } from 'node:path';
import { launchChromium, openPage, screenshot, SCREENSHOT_DIR, signInThroughForm, type DashboardPage } from './browser.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let connection: { id: string; apiKey: string };

const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);
const iso = (ms: number) => new Date(ms).toISOString();

/** A charge that failed twice and then succeeded, with its arguments, result, log and progress. */
function flakyCharge(t0: number): unknown[] {
  const job = { externalId: 'charge-INV-7', name: 'billing.charge_invoice', queue: 'billing', maxRetries: 3 };
  const args = { args: [7], kwargs: { invoice_id: 'INV-7', customer: { email: 'ada@example.com', password: 'hunter2' }, amount_cents: 4200 } };
  const events: unknown[] = [jobEvent(connection.id, t0, { ...job, state: 'queued', attempt: 1, args })];
  for (const attempt of [1, 2]) {
    const start = t0 + attempt * 2_000;
    const error = `GatewayTimeout: the card network did not answer (attempt ${attempt})`;
    events.push(jobEvent(connection.id, start, { ...job, state: 'active', attempt, workerId: `celery@web-${attempt}`, startedAt: iso(start), logs: [`attempt ${attempt}: charging 42.00 EUR`] }));
    events.push(jobEvent(connection.id, start + 900, { ...job, state: 'retrying', attempt, workerId: `celery@web-${attempt}`, startedAt: iso(start), error, stacktrace: stackTraceOf(error) }));
  }
  const start = t0 + 6_000;
  events.push(jobEvent(connection.id, start, { ...job, state: 'active', attempt: 3, workerId: 'celery@web-1', startedAt: iso(start), progress: { percent: 50, stage: 'capturing' }, logs: ['attempt 3: charging 42.00 EUR'] }));
  events.push(
    jobEvent(connection.id, start + 1_200, { ...job, state: 'completed', attempt: 3, workerId: 'celery@web-1', startedAt: iso(start), completedAt: iso(start + 1_200), result: { charged: true, receipt: 'rcpt_19' }, logs: ['captured'] }),
  );
  return events;
}

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('payload-ui');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  connection = await createConnection(service.baseUrl, await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'production');
  browser = await launchChromium();
  const t0 = Date.now() - 60_000;
  const reply = await ingest(service.baseUrl, connection.apiKey, [
    ...flakyCharge(t0),
    jobEvent(connection.id, Date.now() - 2_000, { externalId: 'resize-88', name: 'images.resize', queue: 'media', state: 'active', workerId: 'celery@batch-1', progress: 0.35, args: { path: 's3://bucket/88.png' } }),
  ]);
  expect(reply.body.rejected).toBe(0);
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

async function signedIn(options: { width?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<DashboardPage> {
  const opened = await openPage(browser, service.baseUrl, options);
  await signInThroughForm(opened.page, ADMIN_EMAIL, ADMIN_PASSWORD);
  return opened;
}

describe("a job's arguments, result, log, progress and attempts in Chromium", () => {
  test('the list: a running job shows its progress bar, a finished one none; a job that succeeded after retries shows no error', async () => {
    const { page, problems, context } = await signedIn();
    const row = (externalId: string) => page.locator('tbody tr', { hasText: externalId });
    await row('resize-88').waitFor();
    expect(await row('resize-88').locator('progress').getAttribute('value')).toBe('0.35');
    expect(await row('charge-INV-7').locator('.error-inline').textContent()).toBe('');
    expect(await row('charge-INV-7').locator('progress').count()).toBe(0);
    await screenshot(page, 'jobs-progress-light');
    expect(problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
    await context.close();
  }, TEST_TIMEOUT_MS);

  for (const [label, options] of [
    ['desktop, light', { width: 1280, colorScheme: 'light' }],
    ['phone width, dark', { width: 390, colorScheme: 'dark' }],
  ] as const) {
    test(`the detail (${label}): arguments with the password masked, the result, the log, progress and three attempts with their errors`, async () => {
      const { page, problems, context } = await signedIn(options);
      await page.goto('/jobs?search=billing');
      await page.locator('tbody tr', { hasText: 'charge-INV-7' }).getByRole('link', { name: 'billing.charge_invoice' }).click();
      await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { name: 'Arguments' }).waitFor();
      const args = await page.locator('h2:has-text("Arguments") + .code-block pre').textContent();
      expect(JSON.parse(args!)).toEqual({ args: [7], kwargs: { invoice_id: 'INV-7', customer: { email: 'ada@example.com', password: '[redacted]' }, amount_cents: 4200 } });
      expect(JSON.parse((await page.locator('h2:has-text("Result") + .code-block pre').textContent())!)).toEqual({ charged: true, receipt: 'rcpt_19' });
      expect(await page.getByRole('heading', { name: /^Log \(4 lines/ }).count()).toBe(1);
      expect(await page.getByLabel('Log').textContent()).toBe('attempt 1: charging 42.00 EUR\nattempt 2: charging 42.00 EUR\nattempt 3: charging 42.00 EUR\ncaptured');
      // progress of the run that completed: 50 % while capturing, its last report, said as such
      expect(await page.locator('.card .progress-text').first().textContent()).toBe('50 % · capturing');
      await page.getByText('As last reported while it ran.').waitFor();
      const attempts = page.getByRole('list', { name: 'Attempts' }).locator(':scope > li');
      expect(await attempts.count()).toBe(3);
      expect(await attempts.locator('.badge').allTextContents()).toEqual(['failed', 'failed', 'completed']);
      expect(await attempts.nth(0).locator('pre.error-text').textContent()).toBe('GatewayTimeout: the card network did not answer (attempt 1)');
      expect(await attempts.nth(1).locator('pre.error-text').textContent()).toBe('GatewayTimeout: the card network did not answer (attempt 2)');
      expect(await attempts.nth(2).locator('pre.error-text').count()).toBe(0);
      await attempts.nth(1).locator('summary', { hasText: 'Traceback' }).click();
      await attempts.nth(1).locator('details pre').waitFor();
      expect(await attempts.nth(1).locator('details pre').textContent()).toContain('attempt 2');
      // the current run's error section: none, the job succeeded
      expect(await page.getByRole('heading', { name: 'Error', exact: true }).count()).toBe(0);
      await screenshot(page, `job-detail-payload-${label.replace(/[^a-z]+/g, '-')}`);
      // the attempts as a reader scrolled to them sees them (a full page is too tall to read at phone width)
      await page.getByRole('heading', { name: /^Attempts/ }).evaluate((heading) => heading.scrollIntoView());
      await page.screenshot({ path: join(SCREENSHOT_DIR, `job-detail-attempts-${label.replace(/[^a-z]+/g, '-')}.png`) });
      expect(problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
      await context.close();
    }, TEST_TIMEOUT_MS);
  }
});
