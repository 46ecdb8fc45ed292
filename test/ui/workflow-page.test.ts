/**
 * A job's workflow on its detail page, in Chromium against the real service, at desktop and
 * phone width: why it is stuck first, the totals, the tree with each node linking to its
 * job and each parent foldable; a flow of 1,000 jobs unfolds whole. Screenshots in
 * .tmp/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { jobEvent } from '../support/events.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium, openPage, screenshot, SCREENSHOT_DIR, signInThroughForm, type DashboardPage } from './browser.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;
let connection: { id: string; apiKey: string };
const views: Array<{ name: string; view: DashboardPage }> = [];

const expectedProblem = (problem: string) => /HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem);

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('workflow-ui');
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

async function send(jobs: Array<Record<string, unknown>>) {
  const atMs = Date.now() - 60_000;
  const events = jobs.map((job, index) => jobEvent(connection.id, atMs + index, { queue: 'albums', ...job }, { framework: 'bullmq' }));
  for (let start = 0; start < events.length; start += 1000) expect((await ingest(service.baseUrl, connection.apiKey, events.slice(start, start + 1000))).body.accepted).toBe(Math.min(1000, events.length - start));
}

async function idOf(page: DashboardPage['page'], externalId: string): Promise<string> {
  const listed = (await (await page.request.get(`/api/jobs?limit=100&search=${encodeURIComponent('render')}`)).json()) as { data: Array<{ id: string; externalId: string }> };
  return listed.data.find((job) => job.externalId === externalId)!.id;
}

function expectNoProblems() {
  for (const { view } of views) expect(view.problems.splice(0).filter((problem) => !expectedProblem(problem))).toEqual([]);
}

describe('the workflow on a job detail', () => {
  test('a flow whose child failed: the stuck reason first, the totals, the tree linking to each job, foldable', async () => {
    await send([
      { externalId: 'albums:1', name: 'render-album', state: 'queued', extensions: { bullmqState: 'waiting-children' } },
      ...['2', '3', '5'].map((id) => ({ externalId: `albums:${id}`, name: 'render-track', state: 'completed', parentExternalId: 'albums:1' })),
      { externalId: 'albums:4', name: 'render-track', state: 'failed', error: 'codec missing', parentExternalId: 'albums:1' },
      { externalId: 'albums:6', name: 'render-stems', state: 'completed', parentExternalId: 'albums:3' },
    ]);
    for (const { name, view } of views) {
      const { page } = view;
      const grandchild = await idOf(page, 'albums:6');
      await page.goto(`/jobs/${grandchild}`);
      const section = page.getByRole('region', { name: 'Workflow' });
      await section.getByRole('alert').waitFor();
      const text = await section.innerText();
      // why it is stuck comes before the tree
      expect(text.indexOf('Why it is stuck')).toBeLessThan(text.indexOf('render-stems'));
      expect(text).toContain('render-album waits for its children (waiting-children), and a child failed: render-track (albums:4)');
      expect(text).toContain('6 jobs');
      const tree = section.getByRole('list', { name: 'Workflow tree' });
      expect(await tree.locator('li').count()).toBe(6);
      await screenshot(page, `workflow-detail-${name}`);
      // folding the root hides its children; unfolding shows them again
      const fold = tree.getByRole('button', { name: /Fold the 4 jobs under render-album/ });
      await fold.click();
      expect(await tree.locator('li').count()).toBe(1);
      await tree.getByRole('button', { name: /Unfold the 4 jobs under render-album/ }).click();
      expect(await tree.locator('li').count()).toBe(6);
      // a node links to its job
      await tree.getByRole('link', { name: 'render-album' }).click();
      await page.waitForURL(new RegExp(`/jobs/${await idOf(page, 'albums:1')}$`));
      await page.getByRole('heading', { name: 'render-album', exact: true }).waitFor();
      await page.getByRole('region', { name: 'Workflow' }).getByRole('list', { name: 'Workflow tree' }).waitFor();
    }
    // the jobs list goes to a job's workflow: its jobs, and only those
    const { page: listPage } = views[0]!.view;
    await listPage.goto('/jobs?search=render-stems');
    await listPage.getByRole('link', { name: 'its workflow' }).first().click();
    await listPage.waitForURL(/rootId=/);
    await listPage.locator('tbody tr', { hasText: 'render-album' }).first().waitFor();
    expect(await listPage.locator('tbody tr').count()).toBe(6);
    await screenshot(listPage, 'workflow-list-desktop');
    // the workflow's actions: its failed child retried through the agent, job by job, the result listed
    const { page } = views[0]!.view;
    await page.goto(`/jobs/${await idOf(page, 'albums:1')}`);
    const actions = page.getByRole('group', { name: 'Jobs in this workflow' });
    await actions.getByText('6 jobs in this workflow').waitFor();
    expect(await actions.getByRole('button', { name: 'Revoke 1 of 6' }).isEnabled()).toBe(true); // the waiting parent
    await actions.getByRole('button', { name: 'Retry 1 of 6' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry', exact: true }).click();
    const results = page.getByRole('region', { name: 'Workflow' }).locator('.results');
    await results.getByText('1 of 1 requested').waitFor();
    expect(await results.innerText()).toContain('render-track: retry requested, waiting for the agent');
    // live: the tree shows the retried job's new state in place, from the stream
    await page.getByRole('list', { name: 'Workflow tree' }).locator('li', { hasText: 'albums:4' }).getByText('retrying', { exact: true }).waitFor();
    await screenshot(page, 'workflow-retried-desktop');
    const retried = (await (await page.request.get(`/api/jobs/${await idOf(page, 'albums:4')}`)).json()) as { lastCommand: { type: string; status: string } };
    expect(retried.lastCommand).toMatchObject({ type: 'retry', status: 'pending' });
    expectNoProblems();
  }, TEST_TIMEOUT_MS);

  test('a flow of 1,000 jobs: the parent\'s page shows every job, and folds them', async () => {
    const children = Array.from({ length: 999 }, (_, i) => ({ externalId: `big:${i + 2}`, name: 'render-frame', state: i % 100 === 0 ? 'failed' : 'completed', parentExternalId: 'big:1' }));
    await send([{ externalId: 'big:1', name: 'render-film', state: 'queued', extensions: { bullmqState: 'waiting-children' } }, ...children]);
    const { page } = views[0]!.view;
    const listed = (await (await page.request.get('/api/jobs?limit=5&search=render-film')).json()) as { data: Array<{ id: string }> };
    const started = performance.now();
    await page.goto(`/jobs/${listed.data[0]!.id}`);
    const tree = page.getByRole('list', { name: 'Workflow tree' });
    await tree.locator('li').nth(999).waitFor();
    // a figure for the reader, not a test of speed (the machine is shared)
    console.log(`the detail page with 1,000 workflow jobs drew them all ${Math.round(performance.now() - started)} ms after it was opened, in Chromium`);
    expect(await tree.locator('li').count()).toBe(1000);
    expect(await page.getByRole('region', { name: 'Workflow' }).innerText()).toContain('render-film waits for its children (waiting-children), and 10 children failed');
    // the page is 26,000 pixels long: the screen around the tree's top is what a person sees
    await page.getByRole('heading', { name: 'Workflow' }).scrollIntoViewIfNeeded();
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'workflow-1000-desktop.png') });
    await tree.getByRole('button', { name: /Fold the 999 jobs under render-film/ }).click();
    expect(await tree.locator('li').count()).toBe(1);
    expectNoProblems();
  }, TEST_TIMEOUT_MS);
});
