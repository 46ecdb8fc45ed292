/**
 * The Queues page in Chromium against the real service: one compact row per queue over the
 * last hour by default (a busy queue's throughput in jobs per minute), what the job system
 * itself counts (BullMQ's waiting, delayed, failed and paused; Sidekiq's latency) from the
 * queue snapshots' `extensions` as the agents send them, and a queue's chart only when asked
 * for, kept in the address. Desktop and phone width; screenshots in .tmp/screenshots/queues-*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { iso, jobEvent, queueEvent } from '../support/events.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, type DashboardPage } from './browser.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;

/** What each agent puts in a queue snapshot (agents/bullmq/src/queues.js, the Sidekiq collector's Normalize.queue_event). */
const BULLMQ_COUNTS = { waiting: 12, prioritized: 0, delayed: 3, active: 2, failed: 1, completed: 40, waitingChildren: 0, paused: false };

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('queues-page');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const { id, apiKey } = await createConnection(service.baseUrl, await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'production');
  const now = Date.now();
  const bullmq = { framework: 'bullmq' };
  // 126 jobs of emails finished in the last half hour, 6 of them failed: 2.1 a minute over the hour
  const finished = Array.from({ length: 126 }, (_, i) => {
    const atMs = now - 30 * 60_000 + i * 10_000;
    return jobEvent(id, atMs, { externalId: `e-${i}`, name: 'send', queue: 'emails', state: i % 21 === 0 ? 'failed' : 'completed', completedAt: iso(atMs) }, bullmq);
  });
  const reply = await ingest(service.baseUrl, apiKey, [
    ...finished,
    { ...queueEvent(id, now, { name: 'emails', depth: 12, consumers: 2, extensions: BULLMQ_COUNTS }), ...bullmq },
    { ...queueEvent(id, now, { name: 'reports', depth: 5, consumers: 0, extensions: { ...BULLMQ_COUNTS, waiting: 5, delayed: 0, active: 0, failed: 0, paused: true } }), ...bullmq },
    { ...queueEvent(id, now, { name: 'mailers', depth: 7, consumers: 3, extensions: { latencyMs: 4_200 } }), framework: 'sidekiq' },
    queueEvent(id, now, { name: 'billing', depth: 0 }),
  ]);
  expect(reply.body.rejected).toBe(0);
  browser = await launchChromium();
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

async function queuesPage(width: number): Promise<DashboardPage> {
  const view = await openPage(browser, service.baseUrl, { width });
  await signInThroughForm(view.page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await view.page.goto('/queues');
  await view.page.locator('table[aria-label="Queues"] tbody tr').nth(3).waitFor();
  return view;
}

const rowOf = (page: Page, queue: string) => page.locator('table[aria-label="Queues"] tbody tr', { has: page.getByRole('link', { name: queue, exact: true }) });
/** A row's visible cells, by column header. */
async function cellsOf(page: Page, queue: string): Promise<Record<string, string>> {
  const headers = await page.locator('table[aria-label="Queues"] thead th').allTextContents();
  const cells = await rowOf(page, queue).locator('td').allTextContents();
  return Object.fromEntries(headers.map((header, i) => [header, cells[i]!.trim()]));
}
/** The first "who am I" before signing in answers 401: not a problem of the page. */
const beforeSignIn = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);
const chartDrawings = (page: Page) => page.locator('[data-testid="queue-chart"] svg');

describe('the Queues page', () => {
  test('over the last hour by default: one row per queue, with what the job system counts', async () => {
    const { page, context, problems } = await queuesPage(1280);
    expect(await page.getByRole('navigation', { name: 'Time range' }).getByRole('link', { name: '1h' }).getAttribute('aria-current')).toBe('page');
    expect(await cellsOf(page, 'emails')).toMatchObject({ Depth: '12', Consumers: '2', Throughput: '2.1/min', Failed: '4.8 %' });
    expect(await rowOf(page, 'emails').locator('small').textContent()).toBe('12 waiting · 3 delayed · 1 failed · 2 active');
    // paused is a badge beside the name (the queue's `paused`, from its snapshot or a pause carried out)
    expect(await rowOf(page, 'reports').locator('small').textContent()).toBe('5 waiting · 0 delayed · 0 failed');
    expect(await rowOf(page, 'reports').locator('.state-paused').textContent()).toBe('paused');
    expect(await rowOf(page, 'mailers').locator('small').textContent()).toBe('oldest waited 4.2 s');
    expect(await cellsOf(page, 'billing')).toMatchObject({ Depth: '0', Throughput: '–', Failed: '–' });
    // compact: no chart is drawn until asked for, and four queues fit in a screen
    expect(await chartDrawings(page).count()).toBe(0);
    expect(await page.locator('table[aria-label="Queues"]').evaluate((table) => table.getBoundingClientRect().bottom)).toBeLessThan(500);
    await screenshot(page, 'queues-desktop');

    // over a day, the same jobs are a few an hour, not "0.00/min"
    await page.getByRole('link', { name: '24h' }).click();
    await page.waitForURL(/range=24h/);
    await page.waitForFunction(() => document.querySelector('table[aria-label="Queues"] thead')?.textContent?.includes('Health, 24h'));
    expect(await cellsOf(page, 'emails')).toMatchObject({ Throughput: '5.3/h' });
    expect(problems.filter((problem) => !beforeSignIn(problem))).toEqual([]);
    await context.close();
  }, TEST_TIMEOUT_MS);

  test("a queue's chart opens on demand under the table, named after its queue, stays in the address, and closes", async () => {
    const { page, context, problems } = await queuesPage(1280);
    const button = page.getByRole('button', { name: 'Chart of emails' });
    await button.click();
    await chartDrawings(page).first().waitFor();
    expect(await chartDrawings(page).count()).toBe(1);
    expect(await button.getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('figure.chart figcaption').allTextContents()).toEqual(['emails: finished jobs per bucket, 1h']);
    const size = await chartDrawings(page).first().evaluate((chart) => ({ width: chart.getBoundingClientRect().width, height: chart.getBoundingClientRect().height }));
    expect(size.width).toBeGreaterThan(600);
    expect(size.height).toBeGreaterThan(100);
    await screenshot(page, 'queues-chart-desktop');

    // the address alone opens it again
    expect(page.url()).toMatch(/charts=/);
    await page.reload();
    await chartDrawings(page).first().waitFor();
    await page.getByRole('button', { name: 'Chart of emails' }).click();
    await chartDrawings(page).first().waitFor({ state: 'detached' });
    expect(page.url()).not.toMatch(/charts=/);
    expect(problems.filter((problem) => !beforeSignIn(problem))).toEqual([]);
    await context.close();
  }, TEST_TIMEOUT_MS);

  test('at phone width the rows keep the queue, its facts, depth, throughput and failures, and a chart fits the screen', async () => {
    const { page, context, problems } = await queuesPage(390);
    const visible = await page.locator('table[aria-label="Queues"] thead th').evaluateAll((cells) => cells.filter((cell) => (cell as HTMLElement).offsetParent !== null).map((cell) => cell.textContent));
    expect(visible).toEqual(['Queue', 'Depth', 'Throughput', 'Failed']);
    // the queue's name, its chart button and the job system's facts read in full
    const name = await rowOf(page, 'emails').locator('td').first().evaluate((cell) => ({ width: cell.getBoundingClientRect().width, clipped: cell.scrollWidth > cell.clientWidth }));
    expect(name.width).toBeGreaterThan(130);
    expect(name.clipped).toBe(false);
    expect(await rowOf(page, 'emails').locator('small').isVisible()).toBe(true);
    await screenshot(page, 'queues-phone');
    await page.getByRole('button', { name: 'Chart of emails' }).click();
    await chartDrawings(page).first().waitFor();
    const width = await chartDrawings(page).first().evaluate((chart) => chart.getBoundingClientRect().right);
    expect(width).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await screenshot(page, 'queues-chart-phone');
    expect(problems.filter((problem) => !beforeSignIn(problem))).toEqual([]);
    await context.close();
  }, TEST_TIMEOUT_MS);
});
