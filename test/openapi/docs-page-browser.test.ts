/**
 * The reference page in Debian's Chromium (see test/ui/browser.ts): it renders the
 * document's operations with the network limited to this service, under its CSP, with
 * no console error, so it works offline and loads nothing from a CDN.
 */
import { afterAll, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage, screenshot, UI_WAIT_MS } from '../ui/browser.ts';
import { testApp } from '../support/test-app.ts';

let browser: Browser | undefined;
let stop: (() => Promise<void>) | undefined;
afterAll(async () => {
  await browser?.close();
  await stop?.();
});

test('the page renders every tag and the operations, asks nothing of another origin, and breaks no CSP rule', async () => {
  const t = await testApp();
  const server = t.serve();
  stop = server.stop;
  browser = await launchChromium();
  const { page, problems } = await openPage(browser, server.baseUrl);
  const elsewhere: string[] = [];
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(server.baseUrl) && !url.startsWith('data:') && !url.startsWith('blob:')) elsewhere.push(url);
  });
  await page.goto('/docs');
  // the first render parses the whole document (some 60 operations, 330 KB): on a loaded 2-core machine that alone took 5 to 20 s
  await page.getByText('Send a batch of job, worker and queue events').first().waitFor({ timeout: 3 * UI_WAIT_MS });
  for (const tag of ['Ingest', 'Agent', 'Jobs', 'Stream', 'Service']) await page.getByText(tag, { exact: true }).first().waitFor();
  // an operation opens with its parameters and answers, rendered from the document
  await page.getByText('Send a batch of job, worker and queue events').first().click();
  await page.getByText('DAILY_LIMIT_EXCEEDED').first().waitFor({ timeout: UI_WAIT_MS });
  // no validator badge: it would send the document to a hosted validator
  expect(await page.locator('.validator-badge, img[src*="validator"]').count()).toBe(0);
  await screenshot(page, 'api-reference');
  expect(elsewhere).toEqual([]);
  expect(problems).toEqual([]);
}, 90_000);
