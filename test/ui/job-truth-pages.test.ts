/**
 * What the jobs list and a job's detail say about revokes and retries, in Chromium against
 * the real service, at desktop and phone width: actions offered only where they can work
 * (disabled with the reason otherwise), "revoke requested" while the agent has not
 * reported, the job system's state again with the refusal when it refused, and when
 * scheduled and retrying jobs will run. Each test sends its own jobs; the agent's side
 * is played over its HTTP API. Screenshots in .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { jobEvent } from '../support/events.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, type DashboardPage } from './browser.ts';

const SIDEKIQ_REFUSAL = 'the job is running in Sidekiq process web-1:7:f00d: open-source Sidekiq cannot stop a running job safely, so this run goes on; it will not be retried';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let connection: { id: string; apiKey: string };
const views: Array<{ name: string; view: DashboardPage }> = [];

const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('job-truth-ui');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  connection = await createConnection(service.baseUrl, await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'production');
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

/** Sends jobs of `framework`, each `[externalId, state, extra]`, timed a few seconds ago. */
async function send(framework: string, jobs: Array<[string, string, Record<string, unknown>?]>) {
  const atMs = Date.now() - 3_000;
  const events = jobs.map(([externalId, state, extra]) => jobEvent(connection.id, atMs, { externalId, state, name: `${framework}.task`, queue: 'default', ...extra }, { framework }));
  expect((await ingest(service.baseUrl, connection.apiKey, events)).body.accepted).toBe(jobs.length);
}

const agent = { authorization: () => `Bearer ${connection.apiKey}` };
async function agentRefuses(jobId: string, reason: string) {
  const headers = { authorization: agent.authorization(), 'content-type': 'application/json' };
  const pending = (await (await fetch(`${service.baseUrl}/api/agent/commands`, { headers })).json()) as { data: Array<{ id: string; jobId: string }> };
  const command = pending.data.find((entry) => entry.jobId === jobId)!;
  const reply = await fetch(`${service.baseUrl}/api/agent/commands/ack`, { method: 'POST', headers, body: JSON.stringify({ outcomes: [{ id: command.id, status: 'failed', reason }] }) });
  expect(await reply.json()).toEqual({ acked: 1 });
}

/** Each test ends with no console error, failed request or CSP violation on either page. */
function expectNoProblems() {
  for (const { view } of views) expect(view.problems.splice(0).filter((problem) => !expectedProblem(problem))).toEqual([]);
}

async function jobId(page: DashboardPage['page'], externalId: string): Promise<string> {
  const listed = (await (await page.request.get('/api/jobs?limit=100')).json()) as { data: Array<{ id: string; externalId: string }> };
  return listed.data.find((job) => job.externalId === externalId)!.id;
}

describe('the jobs list and a job detail say what is true about revokes and retries', () => {
  test('the bulk bar offers each action for the selected jobs it can work for, and says why not for the others', async () => {
    const { page } = views[0]!.view;
    await send('sidekiq', [['bulk-running', 'active']]);
    await send('celery', [['bulk-waiting', 'queued'], ['bulk-done', 'completed']]);
    await page.goto('/jobs?search=task');
    for (const externalId of ['bulk-running', 'bulk-waiting', 'bulk-done']) await page.locator('tbody tr', { hasText: externalId }).locator('input[type=checkbox]').check();
    const revoke = page.getByRole('button', { name: 'Revoke 1 of 3' });
    const retry = page.getByRole('button', { name: 'Retry 0 of 3' });
    expect(await revoke.isEnabled()).toBe(true);
    expect(await retry.isDisabled()).toBe(true);
    expect((await revoke.getAttribute('title'))!.split('; ').sort()).toEqual(['only active or queued jobs can be revoked', 'open-source Sidekiq cannot stop a running job safely']);
    expect(await retry.getAttribute('title')).toBe('only failed, cancelled or retrying jobs can be retried');
    await screenshot(page, 'job-truth-bulk-bar');
    await revoke.click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('The other selected jobs are left as they are:');
    expect(await dialog.textContent()).toContain('open-source Sidekiq cannot stop a running job safely');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('1 of 1 requested').waitFor();
    // what was sent reads as requested, not as a plain cancelled; nothing else was touched
    await page.locator('tbody tr', { hasText: 'bulk-waiting' }).locator('.badge.requested', { hasText: 'revoke requested' }).waitFor();
    const states = await Promise.all(['bulk-running', 'bulk-done'].map(async (externalId) => (await (await page.request.get(`/api/jobs/${await jobId(page, externalId)}`)).json()).lastCommand));
    expect(states).toEqual([null, null]);
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

  test('a revoke the job system refused: the list shows the job active again with the refusal, the detail says why and where in its history', async () => {
    await send('sidekiq', [['refused-1', 'active', { workerId: 'web-1:7:f00d' }]]);
    for (const { name, view } of views) {
      const { page } = view;
      const id = await jobId(page, 'refused-1');
      await page.goto(`/jobs/${id}`);
      // not offered: Sidekiq cannot stop a running job; the reason is on the control and in words beside it
      const revoke = page.getByRole('button', { name: 'Revoke' });
      await revoke.waitFor();
      if (name === 'desktop') {
        expect(await revoke.isDisabled()).toBe(true);
        expect(await revoke.getAttribute('title')).toBe('open-source Sidekiq cannot stop a running job safely');
        await page.getByText('Revoke: open-source Sidekiq cannot stop a running job safely').waitFor();
        await page.getByText('Retry: only failed, cancelled or retrying jobs can be retried').waitFor();
        await screenshot(page, 'job-truth-not-offered');
        // asked through the API anyway (the contract answers cancelled): the page says it is requested
        expect((await (await page.request.post(`/api/jobs/${id}/revoke`, { headers: { origin: service.baseUrl } })).json()).state).toBe('cancelled');
        await page.locator('.page-head .badge.requested', { hasText: 'revoke requested' }).waitFor();
        await page.getByText(/revoke requested .*: waiting for the agent/).waitFor();
        await screenshot(page, 'job-truth-requested');
        await agentRefuses(id, SIDEKIQ_REFUSAL);
      }
      // live: the page refetches the job when the stream reports the refusal
      await page.locator('.page-head .badge.state-active').waitFor();
      await page.getByRole('alert').filter({ hasText: `revoke refused: ${SIDEKIQ_REFUSAL}` }).waitFor();
      const timeline = page.getByRole('list', { name: 'State history' });
      expect(await timeline.locator('.note').allTextContents()).toEqual(['revoke requested', `revoke refused: ${SIDEKIQ_REFUSAL}`]);
      expect(await timeline.locator('.badge').allTextContents()).toEqual(['active', 'active', 'active']);
      await screenshot(page, `job-truth-refused-detail-${name}`);
      await page.goto('/jobs?state=active');
      const row = page.locator('tbody tr', { hasText: 'refused-1' });
      await row.locator('.badge.state-active').waitFor();
      expect(await row.locator('.refused').textContent()).toBe('revoke refused');
      expect(await row.locator('.refused').getAttribute('title')).toBe(`revoke refused: ${SIDEKIQ_REFUSAL}`);
      await screenshot(page, `job-truth-refused-list-${name}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    }
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

  test('the scheduled and retrying tabs show when each job runs', async () => {
    const soon = new Date(Date.now() + 5 * 60_000 + 30_000).toISOString();
    const backoff = new Date(Date.now() + 90_000).toISOString();
    await send('bullmq', [['later-1', 'scheduled', { extensions: { eta: soon } }], ['backing-off-1', 'retrying', { error: 'planned failure 1', extensions: { eta: backoff } }]]);
    for (const { name, view } of views) {
      const { page } = view;
      await page.goto('/jobs?state=scheduled');
      const scheduled = page.locator('tbody tr', { hasText: 'later-1' });
      await scheduled.waitFor();
      expect(await page.locator('thead th').allTextContents()).toContain('Runs at');
      expect(await scheduled.locator(`time[datetime="${soon}"]`).textContent()).toMatch(/^in 5 min/);
      await screenshot(page, `job-truth-scheduled-${name}`);
      await page.goto('/jobs?state=retrying');
      expect(await page.locator('tbody tr', { hasText: 'backing-off-1' }).locator(`time[datetime="${backoff}"]`).textContent()).toMatch(/^in 1 min/);
      await page.goto('/jobs?state=completed');
      await page.locator('thead th').first().waitFor();
      expect(await page.locator('thead th').allTextContents()).not.toContain('Runs at');
    }
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

});
