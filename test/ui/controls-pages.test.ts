/**
 * The controls of the job system in Chromium against the real service, at desktop and
 * phone width: a queue's page with its controls and their confirm steps (the clean's names
 * what it removes and how many, as an estimate), the paused state, the row commands of the
 * Scheduled, Retrying and Failed tabs, the workers' quiet and stop; a control the agent
 * cannot do disabled with its reason; and every outcome shown where it was asked (a toast)
 * and on its queue, job or worker. The agent's side is played over its HTTP API.
 * Screenshots in .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, type DashboardPage } from './browser.ts';

const HOUR_MS = 3_600_000;
const BULLMQ_NO_WORKERS = 'BullMQ has no remote control of its workers';
const SIDEKIQ_NO_PAUSE = 'pausing queues is Sidekiq Pro/Enterprise';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let connection: { id: string; apiKey: string };
const views: Array<{ name: string; view: DashboardPage }> = [];

const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);

const agentHeaders = () => ({ authorization: `Bearer ${connection.apiKey}`, 'content-type': 'application/json' });

/** What the agents of the connection report at their start. */
async function report(framework: string, controls: Record<string, unknown>) {
  const reply = await fetch(`${service.baseUrl}/api/agent/capabilities`, { method: 'PUT', headers: agentHeaders(), body: JSON.stringify({ framework, agentVersion: '0.2.0', controls }) });
  expect(reply.status).toBe(200);
}

/** The agent answers its oldest pending command of `type` as told; returns the command. */
async function agentAnswers(type: string, outcome: Record<string, unknown>): Promise<any> {
  const pending = (await (await fetch(`${service.baseUrl}/api/agent/commands`, { headers: agentHeaders() })).json()) as { data: any[] };
  const command = pending.data.find((each) => each.type === type);
  expect(command).toBeDefined();
  const reply = await fetch(`${service.baseUrl}/api/agent/commands/ack`, { method: 'POST', headers: agentHeaders(), body: JSON.stringify({ outcomes: [{ id: command.id, ...outcome }] }) });
  expect(await reply.json()).toEqual({ acked: 1 });
  return command;
}

const ALL_JOB_AND_QUEUE = Object.fromEntries(
  ['revoke', 'retry', 'promote', 'delete', 'kill', 'queue.pause', 'queue.resume', 'queue.clean', 'queue.retry_failed', 'queue.concurrency'].map((type) => [type, { supported: true }]),
);

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('controls-ui');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, DAILY_EVENT_LIMIT: '0' } });
  connection = await createConnection(service.baseUrl, await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'production');
  const now = Date.now();
  const bullmq = (externalId: string, state: string, atMs: number, extra: Record<string, unknown> = {}) =>
    jobEvent(connection.id, atMs, { externalId, state, name: 'send-welcome', queue: 'emails', ...extra }, { framework: 'bullmq' });
  const events = [
    ...[1, 2, 3].map((n) => bullmq(`emails:${n}`, 'completed', now - 2 * HOUR_MS, { completedAt: new Date(now - 2 * HOUR_MS).toISOString() })),
    bullmq('emails:4', 'completed', now - 60_000, { completedAt: new Date(now - 60_000).toISOString() }),
    bullmq('emails:5', 'scheduled', now - 5_000, { extensions: { eta: now + 10 * 60_000 } }),
    bullmq('emails:6', 'retrying', now - 5_000, { error: 'smtp timeout', attempt: 2, extensions: { eta: now + 60_000 } }),
    bullmq('emails:7', 'failed', now - 5_000, { error: 'mailbox does not exist' }),
    { ...queueEvent(connection.id, now - 2_000, { name: 'emails', depth: 12, consumers: 1, extensions: { paused: false, waiting: 12 } }), framework: 'bullmq' },
    { ...workerEvent(connection.id, now, { externalId: 'emails@10.0.0.5:6379', hostname: '10.0.0.5', queues: ['emails'] }), framework: 'bullmq' },
    { ...queueEvent(connection.id, now - 2_000, { name: 'mailers', depth: 3 }), framework: 'sidekiq' },
    { ...workerEvent(connection.id, now, { externalId: 'web-1:7:f00d', hostname: 'web-1', pid: 7, queues: ['mailers'] }), framework: 'sidekiq' },
  ];
  expect((await ingest(service.baseUrl, connection.apiKey, events)).body.accepted).toBe(events.length);
  await report('bullmq', {
    ...ALL_JOB_AND_QUEUE,
    'worker.quiet': { supported: false, reason: `${BULLMQ_NO_WORKERS}: a Worker runs inside your app` },
    'worker.stop': { supported: false, reason: `${BULLMQ_NO_WORKERS}: a Worker runs inside your app` },
  });
  await report('sidekiq', {
    revoke: { supported: true },
    retry: { supported: true },
    'queue.pause': { supported: false, reason: SIDEKIQ_NO_PAUSE },
    'queue.resume': { supported: false, reason: SIDEKIQ_NO_PAUSE },
    'queue.clean': { supported: true },
    'worker.quiet': { supported: true },
    'worker.stop': { supported: true },
  });
  browser = await launchChromium();
  for (const [name, width] of [['desktop', 1280], ['phone', 390]] as const) {
    const view = await openPage(browser, service.baseUrl, { width });
    await signInThroughForm(view.page, ADMIN_EMAIL, ADMIN_PASSWORD);
    views.push({ name, view });
  }
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

function expectNoProblems() {
  for (const { view } of views) expect(view.problems.splice(0).filter((problem) => !expectedProblem(problem))).toEqual([]);
}

async function openQueue(page: Page, name: string) {
  await page.goto('/queues');
  await page.getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
}

const toast = (page: Page, label: string) => page.locator('.toast', { hasText: label });

describe("a queue's page and its controls", () => {
  test('pause: a confirm step says what happens; the toast follows the outcome; the queue shows paused and offers resume', async () => {
    const { page } = views[0]!.view;
    await openQueue(page, 'emails');
    expect(await page.getByRole('button', { name: 'Resume' }).count()).toBe(0); // not paused: resume is not offered
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Its workers take no new jobs of emails until it is resumed').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Pause' }).click();
    await toast(page, 'Pause emails').getByText('requested, waiting for the agent').waitFor();
    await agentAnswers('queue.pause', { status: 'done', details: { paused: true } });
    await toast(page, 'Pause emails').getByText('done').waitFor();
    await page.locator('.page-head .state-paused', { hasText: 'paused' }).waitFor();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await page.locator('.commands li', { hasText: 'Pause' }).getByText('done').waitFor();
    await screenshot(page, 'controls-queue-paused-desktop');
    // the list shows it paused too, and filters by it
    await page.goto('/queues?paused=true');
    await page.locator('tbody tr', { hasText: 'emails' }).locator('.state-paused').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

  test("clean: the dialog names what it removes and how many, as an estimate; the agent's count comes back", async () => {
    for (const { name, view } of views) {
      const { page } = view;
      await openQueue(page, 'emails');
      await page.getByRole('button', { name: 'Clean…' }).click();
      await page.getByText('Remove 3 completed jobs older than 1 h from emails.').waitFor();
      await page.getByText('An estimate from the jobs jobwatch keeps').waitFor();
      await page.getByRole('checkbox', { name: 'failed' }).check();
      await page.getByText('Remove 3 completed and failed jobs older than 1 h from emails.').waitFor();
      await page.getByLabel('Finished more than').selectOption({ label: 'any time' });
      await page.getByText('Remove 5 completed and failed jobs from emails.').waitFor();
      await page.getByRole('checkbox', { name: 'failed' }).uncheck();
      await page.getByLabel('Finished more than').selectOption({ label: '1 h ago' });
      await screenshot(page, `controls-clean-dialog-${name}`);
      if (name === 'desktop') {
        await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
        await toast(page, 'Remove 3 completed jobs older than 1 h from emails').waitFor();
        const command = await agentAnswers('queue.clean', { status: 'done', details: { removed: 3, completed: 3 } });
        expect(command.params).toEqual({ mode: 'finished', olderThanMs: HOUR_MS, states: ['completed'] });
        await toast(page, 'Remove 3 completed jobs older than 1 h from emails').getByText('done (removed 3, completed 3)').waitFor();
      } else {
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      }
    }
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

  test('a control the job system cannot do is disabled with the reason its agent gave', async () => {
    for (const { name, view } of views) {
      const { page } = view;
      await openQueue(page, 'mailers');
      expect(await page.getByRole('button', { name: 'Pause' }).isDisabled()).toBe(true);
      await page.getByText(`Pause: ${SIDEKIQ_NO_PAUSE}`).waitFor();
      expect(await page.getByRole('button', { name: 'Clean…' }).isEnabled()).toBe(true);
      await page.getByText("Retry all failed: this agent version (0.2.0) does not know 'queue.retry_failed'").waitFor();
      await screenshot(page, `controls-queue-unsupported-${name}`);
    }
    expectNoProblems();
  }, TEST_TIMEOUT_MS);
});

describe('row commands of the job list', () => {
  test('Scheduled: run now; the outcome the agent reports shows in a toast', async () => {
    const { page } = views[0]!.view;
    await page.goto('/jobs?state=scheduled');
    const row = page.locator('tbody tr', { hasText: 'emails:5' });
    await row.getByRole('button', { name: 'Run now' }).click();
    await toast(page, 'Run now send-welcome (emails:5)').waitFor();
    await row.getByText('run now requested').waitFor();
    await agentAnswers('promote', { status: 'failed', reason: 'not found: BullMQ no longer has job "5" in queue "emails"' });
    await toast(page, 'Run now send-welcome (emails:5)').getByText('failed: not found: BullMQ no longer has job').waitFor();
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

  test('Retrying: retry now and kill (with a confirm step); Failed: delete (with a confirm step), at phone width too', async () => {
    for (const { name, view } of views) {
      const { page } = view;
      await page.goto('/jobs?state=retrying');
      const row = page.locator('tbody tr', { hasText: 'emails:6' });
      await row.getByRole('button', { name: 'Retry now' }).waitFor();
      await row.getByRole('button', { name: 'Kill' }).waitFor();
      await screenshot(page, `controls-retrying-tab-${name}`);
      await page.goto('/jobs?state=failed');
      const failed = page.locator('tbody tr', { hasText: 'emails:7' });
      await failed.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByText('delete it from the job system (jobwatch keeps its history)').waitFor();
      await screenshot(page, `controls-delete-confirm-${name}`);
      if (name === 'desktop') {
        await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
        await toast(page, 'Delete send-welcome (emails:7)').waitFor();
        await agentAnswers('delete', { status: 'done' });
        await toast(page, 'Delete send-welcome (emails:7)').getByText('done').waitFor();
      } else {
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      }
    }
    const { page } = views[0]!.view;
    await page.goto('/jobs?state=retrying');
    const retrying = page.locator('tbody tr', { hasText: 'emails:6' });
    await retrying.getByRole('button', { name: 'Retry now' }).click();
    await toast(page, 'Retry now send-welcome (emails:6)').waitFor(); // the service has it: the agent can fetch it
    await agentAnswers('retry', { status: 'done' });
    await toast(page, 'Retry now send-welcome (emails:6)').getByText('done').waitFor();
    expectNoProblems();
  }, TEST_TIMEOUT_MS);
});

describe('workers', () => {
  test("quiet and stop: disabled with BullMQ's reason; a Sidekiq process stopped after a confirm step, its outcome on its row", async () => {
    // heartbeats now: a worker silent for 6 s is offline, and an offline one hears nothing
    const beat = (framework: string, worker: Record<string, unknown>) => ({ ...workerEvent(connection.id, Date.now(), worker), framework });
    await ingest(service.baseUrl, connection.apiKey, [
      beat('bullmq', { externalId: 'emails@10.0.0.5:6379', hostname: '10.0.0.5', queues: ['emails'] }),
      beat('sidekiq', { externalId: 'web-1:7:f00d', hostname: 'web-1', pid: 7, queues: ['mailers'] }),
    ]);
    for (const { name, view } of views) {
      const { page } = view;
      await page.goto('/workers');
      const bullmq = page.locator('tbody tr', { hasText: '10.0.0.5' });
      expect(await bullmq.getByRole('button', { name: 'Quiet' }).isDisabled()).toBe(true);
      expect(await bullmq.getByRole('button', { name: 'Quiet' }).getAttribute('title')).toContain(BULLMQ_NO_WORKERS);
      if (name === 'desktop') {
        const sidekiq = page.locator('tbody tr', { hasText: 'web-1' });
        await sidekiq.getByRole('button', { name: 'Stop' }).click();
        await page.getByRole('dialog').getByText('It shuts down as its job system does on a stop signal').waitFor();
        await page.getByRole('dialog').getByRole('button', { name: 'Stop' }).click();
        await toast(page, 'Stop web-1 (pid 7)').waitFor();
        await agentAnswers('worker.stop', { status: 'done' });
        await toast(page, 'Stop web-1 (pid 7)').getByText('done').waitFor();
        await sidekiq.locator('.commands:visible').getByText('done').waitFor();
      }
      await screenshot(page, `controls-workers-${name}`);
    }
    expectNoProblems();
  }, TEST_TIMEOUT_MS);
});
