/**
 * The Connections page in Chromium: a new connection's key is shown once with the command
 * of the agent for each job system (Celery first; BullMQ and Sidekiq a click away), each
 * naming the key and the address the page was opened at. Desktop and phone width;
 * screenshots in .tmp/screenshots/connections-*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { launchChromium, openPage, screenshot, signInThroughForm } from './browser.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('connections-page');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  browser = await launchChromium();
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

describe('the Connections page', () => {
  for (const [width, suffix] of [[1280, 'desktop'], [390, 'phone']] as const) {
    test(`at ${suffix} width, a new key comes with the command of the agent of each job system`, async () => {
      const view = await openPage(browser, service.baseUrl, { width });
      const { page } = view;
      await signInThroughForm(page, ADMIN_EMAIL, ADMIN_PASSWORD);
      await page.goto('/connections');
      await page.getByLabel('New connection name').fill(`production-${suffix}`);
      await page.getByRole('button', { name: 'Create connection' }).click();
      const apiKey = (await page.getByTestId('api-key').textContent())!.trim();
      const command = page.getByTestId('agent-command');
      const tail = `--url ${service.baseUrl} \\\n  --api-key ${apiKey}`;
      const systems = page.getByRole('group', { name: 'Job system' });
      expect(await systems.getByRole('button').allTextContents()).toEqual(['Celery', 'BullMQ', 'Sidekiq']);
      expect(await systems.getByRole('button', { name: 'Celery' }).getAttribute('aria-pressed')).toBe('true');
      expect(await command.textContent()).toBe(`jobwatch-celery \\\n  --broker redis://localhost:6379/0 \\\n  ${tail}`);
      await screenshot(page, `connections-celery-${suffix}`);

      await systems.getByRole('button', { name: 'BullMQ' }).click();
      expect(await command.textContent()).toBe(`node agents/bullmq/bin/jobwatch-bullmq.js \\\n  --redis redis://localhost:6379 \\\n  ${tail}`);
      await systems.getByRole('button', { name: 'Sidekiq' }).click();
      expect(await command.textContent()).toBe(`ruby agents/sidekiq/bin/jobwatch-sidekiq \\\n  --redis redis://localhost:6379/0 \\\n  ${tail}`);
      // Sidekiq's collector reads what the integration records: the page says to install it
      expect(await page.getByRole('region', { name: `API key of production-${suffix}` }).textContent()).toContain('Jobwatch::Sidekiq.install!');
      expect(await systems.getByRole('button', { name: 'Sidekiq' }).getAttribute('aria-pressed')).toBe('true');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      await screenshot(page, `connections-sidekiq-${suffix}`);
      expect(view.problems.filter((problem) => !/HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem))).toEqual([]);
      await view.context.close();
    }, TEST_TIMEOUT_MS);
  }
});
