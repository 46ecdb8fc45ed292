/**
 * The Alerts page in Chromium against the real service: create a channel (secret shown
 * once) and a rule with its preview, break a task, see the rule fire (in the table and
 * the header) and the signed webhook arrive, send a test, then recover and see it
 * resolve; and the page narrow and dark. Each test makes its own connection, channel,
 * rule and receiver, so any one runs alone or in any order. Every wait is bounded; no
 * timing is asserted. Screenshots in .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { hmacHex, webhookReceiver } from '../alerts/webhook-receiver.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, UI_WAIT_MS, type DashboardPage } from './browser.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let cookie: string;
const receivers: Array<ReturnType<typeof webhookReceiver>> = [];

const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('alerts-ui');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, ALERT_EVAL_SECONDS: '1', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  browser = await launchChromium();
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  for (const receiver of receivers) receiver.stop();
  removeDir(dataDir);
});

function receiver() {
  const started = webhookReceiver();
  receivers.push(started);
  return started;
}

function finishedJobs(connectionId: string, count: number, prefix: string, state: 'failed' | 'completed') {
  const atMs = Date.now() - 1_000;
  return Array.from({ length: count }, (_, index) => ({
    type: 'job_state_change',
    timestamp: new Date(atMs).toISOString(),
    framework: 'celery',
    connectionId,
    job: { externalId: `${prefix}-${index}`, name: 'emails.send', state, queue: 'emails', completedAt: new Date(atMs).toISOString() },
  }));
}

async function post(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A connection of its own with a json channel to a receiver of its own and a failure-rate rule on the emails queue. */
async function ruleWithChannel(label: string) {
  const connection = await createConnection(service.baseUrl, cookie, label);
  const hooks = receiver();
  const { channel, secret } = await post('/api/alert-channels', { connectionId: connection.id, name: `${label} receiver`, url: hooks.url(), format: 'json' });
  const rule = await post('/api/alert-rules', { connectionId: connection.id, name: `${label} failing`, kind: 'failure_rate', queue: 'emails', threshold: 0.5, windowSeconds: 600, channelIds: [channel.id] });
  return { connection, hooks, channel, secret: secret as string, rule };
}

async function statusOf(ruleId: string): Promise<string> {
  const { body } = await getJson(service.baseUrl, '/api/alert-rules', cookie);
  return body.data.find((rule: { id: string }) => rule.id === ruleId).status;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + UI_WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

async function alertsPage(options: { colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<DashboardPage> {
  const view = await openPage(browser, service.baseUrl, options);
  await signInThroughForm(view.page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await view.page.goto('/alerts');
  await view.page.getByRole('form', { name: 'New rule' }).waitFor();
  return view;
}

const ruleRow = (view: DashboardPage, name: string) => view.page.locator('table[aria-label="Alert rules"] tbody tr', { hasText: name });

describe('the Alerts page in Chromium', () => {
  test('create a channel (secret shown once) and a failure-rate rule with a preview of the value now', async () => {
    const connection = await createConnection(service.baseUrl, cookie, 'create-flow');
    const hooks = receiver();
    await ingest(service.baseUrl, connection.apiKey, finishedJobs(connection.id, 4, 'warm', 'completed'));
    const view = await alertsPage();
    const { page } = view;

    const channelForm = page.getByRole('form', { name: 'New channel' });
    await channelForm.getByLabel('Connection').selectOption({ label: 'create-flow' });
    await channelForm.getByLabel('Name').fill('create-flow receiver');
    await channelForm.getByLabel('Webhook URL').fill(hooks.url());
    await channelForm.getByRole('button', { name: 'Add channel' }).click();
    const secret = (await page.getByTestId('channel-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    const card = page.getByRole('region', { name: 'Channel create-flow receiver' });
    await card.waitFor();
    // its notices link back to the dashboard at the address this page was opened at
    expect(await card.textContent()).toContain(`links open ${service.baseUrl}`);
    await screenshot(page, 'alerts-channel-created');
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    expect(await page.getByTestId('channel-secret').count()).toBe(0);

    const ruleForm = page.getByRole('form', { name: 'New rule' });
    await ruleForm.getByLabel('Connection').selectOption({ label: 'create-flow' });
    await ruleForm.getByLabel('Name').fill('create-flow failing');
    await ruleForm.getByLabel('Queue (optional)').fill('emails');
    await ruleForm.getByLabel('Threshold (%)').fill('50');
    await ruleForm.getByLabel('Window (minutes)').fill('10');
    await page.getByTestId('rule-preview').getByText('Value now: 0%').waitFor();
    await page.getByTestId('rule-preview').getByText('condition does not hold').waitFor();
    await ruleForm.getByLabel('create-flow receiver').check();
    await ruleForm.getByRole('button', { name: 'Create rule' }).click();
    const row = ruleRow(view, 'create-flow failing');
    await row.waitFor();
    // the condition in words, once: the kind is not repeated before it
    const headers = await page.locator('table[aria-label="Alert rules"] thead th').allTextContents();
    expect((await row.locator('td').nth(headers.indexOf('Condition')).textContent())!.trim()).toBe('failure rate > 50% over 10 min, queue emails');
    expect(await row.locator('.badge', { hasText: 'ok' }).count()).toBe(1);
    await screenshot(page, 'alerts-rule-created');
    expect(view.problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
    await view.context.close();
  }, TEST_TIMEOUT_MS);

  test('a broken task fires the rule: the table and the header say so, and the signed webhook arrives with an absolute link', async () => {
    const { connection, hooks, secret, rule } = await ruleWithChannel('fire');
    const view = await alertsPage();
    const { page } = view;
    await ruleRow(view, 'fire failing').waitFor();
    await ingest(service.baseUrl, connection.apiKey, finishedJobs(connection.id, 10, 'broken', 'failed'));
    await ruleRow(view, 'fire failing').locator('.badge', { hasText: 'firing' }).waitFor({ timeout: UI_WAIT_MS });
    // the header counts every rule firing now (other tests' rules included)
    await until('the header to count the firing rules', async () => {
      const { body } = await getJson(service.baseUrl, '/api/alerts', cookie);
      const shown = await page.getByTestId('firing-badge').textContent().catch(() => null);
      return shown === `${body.firing.length} firing`;
    });
    const request = await until('the webhook', async () => hooks.received[0]);
    const payload = JSON.parse(request.body);
    expect(payload).toMatchObject({ status: 'firing', rule: { id: rule.id, name: 'fire failing', kind: 'failure_rate', queue: 'emails', threshold: 0.5 } });
    // signed with this channel's secret, over the exact body
    expect(request.headers.get('x-jobwatch-signature')).toBe(`sha256=${hmacHex(secret, request.body)}`);
    expect(payload.link).toBe(`${service.baseUrl}/jobs?connectionId=${connection.id}&state=failed&queue=emails`);
    await page.locator('ul[aria-label="Deliveries of fire receiver"] li', { hasText: 'firing' }).waitFor();
    await screenshot(page, 'alerts-firing');
    expect(view.problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
    await view.context.close();
  }, TEST_TIMEOUT_MS);

  test('send a test from the channel; edit the rule; recovery resolves it', async () => {
    const { connection, hooks, rule } = await ruleWithChannel('recover');
    await ingest(service.baseUrl, connection.apiKey, finishedJobs(connection.id, 10, 'broken', 'failed'));
    await until('the rule to fire', async () => (await statusOf(rule.id)) === 'firing');
    await until('the firing webhook', async () => hooks.received.length === 1);
    const view = await alertsPage();
    const { page } = view;
    const channel = page.getByRole('region', { name: 'Channel recover receiver' });
    await channel.getByRole('button', { name: 'Send a test' }).click();
    await page.locator('ul[aria-label="Deliveries of recover receiver"] li', { hasText: 'test' }).waitFor();

    await page.getByRole('button', { name: 'Edit recover failing' }).click();
    const editForm = page.getByRole('form', { name: 'Edit recover failing' });
    await editForm.getByTestId('rule-preview').getByText('condition holds').waitFor();
    await editForm.getByLabel('Threshold (%)').fill('40');
    await editForm.getByRole('button', { name: 'Save rule' }).click();
    const row = ruleRow(view, 'recover failing');
    await row.getByText('failure rate > 40%').waitFor();

    await ingest(service.baseUrl, connection.apiKey, finishedJobs(connection.id, 30, 'fixed', 'completed'));
    await row.locator('.badge', { hasText: 'resolved' }).waitFor({ timeout: UI_WAIT_MS });
    await page.locator('ul[aria-label="Deliveries of recover receiver"] li', { hasText: 'resolved' }).waitFor();
    await screenshot(page, 'alerts-resolved');
    expect(hooks.received.map((received) => JSON.parse(received.body).status)).toEqual(['firing', 'test', 'resolved']);
    expect(view.problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
    await view.context.close();
  }, TEST_TIMEOUT_MS);

  test('narrow and dark: dark colours, the rule and its state in view, the forms within the screen, nothing scrolling sideways', async () => {
    await ruleWithChannel('narrow');
    const view = await alertsPage({ colorScheme: 'dark', width: 420 });
    const { page } = view;
    const row = ruleRow(view, 'narrow failing');
    await row.waitFor();
    const looks = await page.evaluate(() => {
      const luminance = (color: string) => {
        const [r, g, b] = color.match(/\d+/g)!.map(Number);
        return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
      };
      const body = getComputedStyle(document.body);
      return {
        background: luminance(body.backgroundColor),
        text: luminance(body.color),
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        widestForm: Math.max(...[...document.querySelectorAll('form')].map((form) => form.getBoundingClientRect().right)),
      };
    });
    expect(looks.background).toBeLessThan(0.15);
    expect(looks.text).toBeGreaterThan(0.8);
    expect(looks.overflow).toBe(0);
    expect(looks.widestForm).toBeLessThanOrEqual(420);
    // what a person on call needs: the rule, its state and its value now; who it notifies is left out
    for (const text of ['narrow failing', 'ok', 'no data']) expect({ text, visible: await row.getByText(text, { exact: true }).first().isVisible() }).toEqual({ text, visible: true });
    expect(await page.locator('table[aria-label="Alert rules"] thead th', { hasText: 'Notifies' }).isVisible()).toBe(false);
    await screenshot(page, 'alerts-dark-narrow');
    expect(view.problems.filter((problem) => !expectedProblem(problem))).toEqual([]);
    await view.context.close();
  }, TEST_TIMEOUT_MS);
});
