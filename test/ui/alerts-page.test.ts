/**
 * The Alerts page in Chromium against the real service: create a channel (secret shown
 * once) and a rule with its preview, break a task, see the rule fire (in the table and
 * the header) and the signed webhook arrive, send a test, then recover and see it
 * resolve. Every wait is bounded; no timing is asserted. Screenshots in .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { hmacHex, webhookReceiver } from '../alerts/webhook-receiver.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, UI_WAIT_MS, type DashboardPage } from './browser.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let dashboard: DashboardPage;
let page: Page;
let connection: { id: string; apiKey: string };
const hooks = webhookReceiver();

const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);

function finishedJobs(count: number, prefix: string, state: 'failed' | 'completed') {
  const atMs = Date.now() - 1_000;
  return Array.from({ length: count }, (_, index) => ({
    type: 'job_state_change',
    timestamp: new Date(atMs).toISOString(),
    framework: 'celery',
    connectionId: connection.id,
    job: { externalId: `${prefix}-${index}`, name: 'emails.send', state, queue: 'emails', completedAt: new Date(atMs).toISOString() },
  }));
}

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('alerts-ui');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, ALERT_EVAL_SECONDS: '1', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  connection = await createConnection(service.baseUrl, await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'production');
  browser = await launchChromium();
  dashboard = await openPage(browser, service.baseUrl);
  page = dashboard.page;
  await signInThroughForm(page, ADMIN_EMAIL, ADMIN_PASSWORD);
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  hooks.stop();
  removeDir(dataDir);
});

describe('the Alerts page in Chromium', () => {
  test('create a channel (secret shown once) and a failure-rate rule with a preview of the value now', async () => {
    await ingest(service.baseUrl, connection.apiKey, finishedJobs(4, 'warm', 'completed'));
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.waitForURL(/\/alerts$/);
    await page.getByText('No rule yet').waitFor();
    await page.getByText('No channel yet').first().waitFor();

    const channelForm = page.getByRole('form', { name: 'New channel' });
    await channelForm.getByLabel('Name').fill('ops receiver');
    await channelForm.getByLabel('Webhook URL').fill(hooks.url());
    await channelForm.getByRole('button', { name: 'Add channel' }).click();
    const secret = (await page.getByTestId('channel-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('region', { name: 'Channel ops receiver' }).waitFor();
    await screenshot(page, 'alerts-channel-created');
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    expect(await page.getByTestId('channel-secret').count()).toBe(0);

    const ruleForm = page.getByRole('form', { name: 'New rule' });
    await ruleForm.getByLabel('Name').fill('Emails failing');
    await ruleForm.getByLabel('Queue (optional)').fill('emails');
    await ruleForm.getByLabel('Threshold (%)').fill('50');
    await ruleForm.getByLabel('Window (minutes)').fill('10');
    await page.getByTestId('rule-preview').getByText('Value now: 0%').waitFor();
    await page.getByTestId('rule-preview').getByText('condition does not hold').waitFor();
    await ruleForm.getByLabel('ops receiver').check();
    await ruleForm.getByRole('button', { name: 'Create rule' }).click();
    const row = page.locator('table[aria-label="Alert rules"] tbody tr', { hasText: 'Emails failing' });
    await row.waitFor();
    expect(await row.textContent()).toContain('failure rate > 50% over 10 min, queue emails');
    expect(await row.locator('.badge', { hasText: 'ok' }).count()).toBe(1);
    await screenshot(page, 'alerts-rule-created');
  }, TEST_TIMEOUT_MS);

  test('a broken task fires the rule: the table and the header say so, and the signed webhook arrives', async () => {
    await ingest(service.baseUrl, connection.apiKey, finishedJobs(10, 'broken', 'failed'));
    const row = page.locator('table[aria-label="Alert rules"] tbody tr', { hasText: 'Emails failing' });
    await row.locator('.badge', { hasText: 'firing' }).waitFor({ timeout: UI_WAIT_MS });
    await page.getByTestId('firing-badge').getByText('1 firing').waitFor();
    const deadline = Date.now() + UI_WAIT_MS;
    while (hooks.received.length === 0 && Date.now() < deadline) await Bun.sleep(100);
    const [request] = hooks.received;
    expect(request).toBeDefined();
    const payload = JSON.parse(request!.body);
    expect(payload).toMatchObject({ status: 'firing', rule: { name: 'Emails failing', kind: 'failure_rate', queue: 'emails', threshold: 0.5 } });
    expect(request!.headers.get('x-jobwatch-signature')).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(request!.headers.get('x-jobwatch-signature')).not.toBe(`sha256=${hmacHex('wrong secret', request!.body)}`);
    await page.locator('ul[aria-label="Deliveries of ops receiver"] li', { hasText: 'firing' }).waitFor();
    await screenshot(page, 'alerts-firing');
  }, TEST_TIMEOUT_MS);

  test('send a test from the channel; edit the rule; recovery resolves it', async () => {
    const channel = page.getByRole('region', { name: 'Channel ops receiver' });
    await channel.getByRole('button', { name: 'Send a test' }).click();
    await page.locator('ul[aria-label="Deliveries of ops receiver"] li', { hasText: 'test' }).waitFor();

    await page.getByRole('button', { name: 'Edit Emails failing' }).click();
    const editForm = page.getByRole('form', { name: 'Edit Emails failing' });
    await editForm.getByTestId('rule-preview').getByText('condition holds').waitFor();
    await editForm.getByLabel('Threshold (%)').fill('40');
    await editForm.getByRole('button', { name: 'Save rule' }).click();
    const row = page.locator('table[aria-label="Alert rules"] tbody tr', { hasText: 'Emails failing' });
    await row.getByText('failure rate > 40%').waitFor();

    await ingest(service.baseUrl, connection.apiKey, finishedJobs(30, 'fixed', 'completed'));
    await row.locator('.badge', { hasText: 'resolved' }).waitFor({ timeout: UI_WAIT_MS });
    await page.getByTestId('firing-badge').waitFor({ state: 'detached' });
    await page.locator('ul[aria-label="Deliveries of ops receiver"] li', { hasText: 'resolved' }).waitFor();
    await screenshot(page, 'alerts-resolved');
    const statuses = hooks.received.map((received) => JSON.parse(received.body).status);
    expect(statuses).toEqual(['firing', 'test', 'resolved']);
    expect(dashboard.problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test('narrow and dark: the page stays usable', async () => {
    const dark = await openPage(browser, service.baseUrl, { colorScheme: 'dark', width: 420 });
    await signInThroughForm(dark.page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await dark.page.goto('/alerts');
    await dark.page.locator('table[aria-label="Alert rules"] tbody tr', { hasText: 'Emails failing' }).waitFor();
    await screenshot(dark.page, 'alerts-dark-narrow');
    await dark.context.close();
  }, TEST_TIMEOUT_MS);
});
