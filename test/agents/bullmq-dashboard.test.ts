/**
 * The dashboard in Chromium shows what the BullMQ agent collected from a real BullMQ app:
 * its jobs (and the framework filter), a failed job's detail, its queues, its workers and
 * its task metrics (desktop and phone width). Screenshots land in .tmp/screenshots/bullmq-*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { hostname } from 'node:os';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, getJson, ingest } from '../blackbox/service-process.ts';
import { jobEvent } from '../support/events.ts';
import { buildUi } from '../../ui/build.ts';
import { launchChromium, openPage, screenshot, signInThroughForm } from '../ui/browser.ts';
// the BullMQ agent's own end-to-end harness (its tests run under node; these processes run the same under bun)
import { produce, startStack, type Stack } from '../../agents/bullmq/test/support/stack.js';
import { eventually } from '../../agents/bullmq/test/support/wait.js';

const TEST_MS = 60_000;
let stack: Stack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await buildUi(() => undefined);
  stack = await startStack('dashboard', { QUEUES: 'emails,invoices', WORKER_NAME: 'web-1' });
  // Jobs are produced only once the agent has taken each queue in hand (its state read, its
  // stream followed): a queue it first sees after the jobs ran is reconciled from the state
  // sets, which keep a job's current state only, not the history this page shows.
  for (const queue of ['emails', 'invoices']) {
    await stack.agent.waitFor(new RegExp(`queue ${queue}: (first seen|new since the agent started|resuming)`), 20_000).catch(() => undefined);
  }
  await produce(stack.redis.url, [
    { queue: 'emails', name: 'send-welcome', data: { sleepMs: 20 } },
    { queue: 'emails', name: 'send-receipt', data: { progress: [50] } },
    { queue: 'invoices', name: 'charge-card', data: { failAttempts: 9 }, opts: { attempts: 2, backoff: { type: 'fixed', delay: 100 } } },
  ]);
  await ingest(stack.service.baseUrl, stack.connection.apiKey, [jobEvent(stack.connection.id, Date.now(), { externalId: 'celery-1', name: 'tasks.celery_only' })]);
  await eventually('the BullMQ jobs finished in jobwatch', async () => {
    const { body } = await getJson(stack.service.baseUrl, '/api/jobs?framework=bullmq', stack.cookie);
    return body.data.length === 3 && body.data.every((job: any) => ['completed', 'failed'].includes(job.state));
  }, 30_000, () => stack.agent.output);
  browser = await launchChromium();
  page = (await openPage(browser, stack.service.baseUrl)).page;
  await signInThroughForm(page, ADMIN_EMAIL, ADMIN_PASSWORD);
}, TEST_MS);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('dashboard with BullMQ data', () => {
  test('the jobs page lists BullMQ jobs; the framework filter leaves only them', async () => {
    await page.goto('/jobs');
    await page.locator('tbody tr', { hasText: 'celery_only' }).waitFor();
    await page.getByLabel('Framework').selectOption('bullmq');
    await page.locator('tbody tr', { hasText: 'celery_only' }).waitFor({ state: 'detached' });
    await page.locator('tbody tr', { hasText: 'charge-card' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(3);
    expect(page.url()).toContain('framework=bullmq');
    await screenshot(page, 'bullmq-jobs');
  }, TEST_MS);

  test('a failed BullMQ job shows its error, attempts and state history', async () => {
    await page.locator('tbody tr', { hasText: 'charge-card' }).getByRole('link', { name: 'charge-card' }).click();
    const timeline = page.getByRole('list', { name: 'State history' });
    await timeline.waitFor();
    expect(await timeline.locator('.badge').allTextContents()).toEqual(['queued', 'active', 'retrying', 'queued', 'active', 'failed']);
    expect(await page.locator('body').textContent()).toContain('planned failure 2');
    expect(await page.locator('body').textContent()).toContain('invoices:');
    await screenshot(page, 'bullmq-job-detail');
  }, TEST_MS);

  test('the queues page shows what BullMQ counts in each queue; the workers page names each worker and its host', async () => {
    await page.goto('/queues');
    const invoices = page.locator('table[aria-label="Queues"] tbody tr', { hasText: 'invoices' });
    // the agent's snapshot of BullMQ's own lists: charge-card failed for good and stays in the failed set
    await invoices.locator('small', { hasText: '1 failed' }).waitFor({ timeout: 20_000 });
    expect(await invoices.locator('small').textContent()).toBe('0 waiting · 0 delayed · 1 failed');
    expect(await page.locator('table[aria-label="Queues"] tbody tr', { hasText: 'emails' }).locator('small').textContent()).toBe('0 waiting · 0 delayed · 0 failed');
    await screenshot(page, 'bullmq-queues');
    await page.goto('/workers');
    // Redis sees the workers at 127.0.0.1, as it sees the agent: they run on this machine, and are titled by their name and its host name
    const rows = page.locator('tbody tr', { has: page.getByRole('link', { name: `web-1 on ${hostname()}`, exact: true }) });
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    expect(await rows.locator('small').allTextContents()).toEqual([expect.stringMatching(/^web-1@127\.0\.0\.1:\d+$/), expect.stringMatching(/^web-1@127\.0\.0\.1:\d+$/)]);
    expect(await page.locator('tbody').textContent()).toMatch(/idle|busy|online/);
    await screenshot(page, 'bullmq-workers');
  }, TEST_MS);

  test("the metrics page has a row per BullMQ task with its counts and run time; a task's charts open from it and from a job's detail", async () => {
    await page.goto('/task-metrics');
    const charge = page.locator('table[aria-label="Tasks"] tbody tr', { hasText: 'charge-card' });
    await charge.waitFor();
    // two attempts, both failed: one retry, one failure, a failure rate of 100 %
    expect(await charge.textContent()).toContain('100 %');
    const welcome = page.locator('table[aria-label="Tasks"] tbody tr', { hasText: 'send-welcome' });
    expect(await welcome.locator('td').nth(1).textContent()).toBe('1');
    expect(await welcome.textContent()).toMatch(/\d+ ms/);
    await screenshot(page, 'bullmq-metrics');
    const narrow = await openPage(browser, stack.service.baseUrl, { width: 390 });
    await narrow.context.addCookies(await page.context().cookies());
    await narrow.page.goto('/task-metrics?sort=runP95&order=desc');
    await narrow.page.locator('table[aria-label="Tasks"] tbody tr', { hasText: 'charge-card' }).waitFor();
    await screenshot(narrow.page, 'bullmq-metrics-phone');
    await narrow.context.close();

    await page.goto('/jobs?framework=bullmq');
    await page.locator('tbody tr', { hasText: 'send-welcome' }).getByRole('link', { name: 'send-welcome' }).click();
    await page.getByRole('link', { name: 'Task metrics' }).click();
    await page.getByRole('heading', { name: 'send-welcome' }).waitFor();
    expect(page.url()).toContain('task=send-welcome');
    await page.getByTestId('metric-chart').nth(2).waitFor();
    await screenshot(page, 'bullmq-task-metrics');
  }, TEST_MS);
});
