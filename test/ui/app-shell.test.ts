/**
 * The frame of every page at phone width in Chromium: the header is one line (brand, the
 * pages, the live state and a menu for the rest), nothing is blank between it and the
 * page's own head, and no page scrolls sideways. At desktop width everything is in view.
 * Screenshots in .tmp/screenshots/shell-*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../ui/build.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from '../blackbox/service-process.ts';
import { launchChromium, openPage, screenshot, signInThroughForm, type DashboardPage } from './browser.ts';
import { realisticJobEvents, workerEvents } from './dashboard-data.ts';

let dataDir: string;
let service: ServiceProcess;
let browser: Browser;

/** Each page, and what shows it has loaded. */
const PAGES = [
  ['/jobs', 'tbody tr'],
  ['/queues', 'tbody tr'],
  ['/workers', 'tbody tr'],
  ['/alerts', 'form[aria-label="New rule"]'],
  ['/connections', 'tbody tr'],
  ['/users', 'form'],
] as const;

beforeAll(async () => {
  await buildUi(() => undefined);
  dataDir = makeDataDir('app-shell');
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const connection = await createConnection(service.baseUrl, await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'production');
  await ingest(service.baseUrl, connection.apiKey, [...realisticJobEvents(connection.id, Date.now(), 30), ...workerEvents(connection.id, Date.now())]);
  browser = await launchChromium();
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop().catch(() => service.kill());
  removeDir(dataDir);
});

async function signedIn(width: number): Promise<DashboardPage> {
  const view = await openPage(browser, service.baseUrl, { width });
  await signInThroughForm(view.page, ADMIN_EMAIL, ADMIN_PASSWORD);
  return view;
}

/**
 * The header's height, the blank between it and the page's heading row, and between that row
 * and tabs right under it (the jobs page's states; 0 where there are none).
 */
function layout(page: Page) {
  return page.evaluate(() => {
    const header = document.querySelector('header.top')!.getBoundingClientRect();
    const head = document.querySelector('main .page-head')!;
    const next = head.nextElementSibling;
    const { top, bottom } = head.getBoundingClientRect();
    return {
      headerHeight: header.height,
      gapBelowHeader: top - header.bottom,
      gapAboveTabs: next?.classList.contains('tabs') ? next.getBoundingClientRect().top - bottom : 0,
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    };
  });
}

describe('the header', () => {
  test('at phone width it takes one line, the page starts right under it, and nothing scrolls sideways', async () => {
    const view = await signedIn(390);
    const { page } = view;
    for (const [path, ready] of PAGES) {
      await page.goto(path);
      await page.locator(ready).first().waitFor();
      const { headerHeight, gapBelowHeader, gapAboveTabs, overflow } = await layout(page);
      expect({ path, oneLine: headerHeight <= 52, gapBelowHeader: gapBelowHeader <= 16, gapAboveTabs: gapAboveTabs <= 16, overflow }).toEqual({
        path,
        oneLine: true,
        gapBelowHeader: true,
        gapAboveTabs: true,
        overflow: 0,
      });
      await screenshot(page, `shell${path.replace('/', '-')}-phone`);
    }
    // every page is still one tap away, and the tools (time format, sign out) are in the menu
    await page.getByRole('button', { name: 'Menu' }).click();
    const menu = page.getByRole('navigation', { name: 'Pages' });
    for (const label of ['Jobs', 'Queues', 'Workers', 'Alerts', 'Connections', 'Users']) expect(await menu.getByRole('link', { name: label, exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    await screenshot(page, 'shell-menu-phone');
    await menu.getByRole('link', { name: 'Workers', exact: true }).click();
    await page.waitForURL(/\/workers$/);
    // the menu closes once a page is chosen
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
    expect(view.problems.filter((problem) => !/HTTP 401 GET \/api\/auth\/me|status of 401/.test(problem))).toEqual([]);
    await view.context.close();
  }, TEST_TIMEOUT_MS);

  test('at phone width a worker reads by its title (its controls under it), its state and when it was last heard', async () => {
    const view = await signedIn(390);
    const { page } = view;
    await page.goto('/workers');
    await page.locator('tbody tr').first().waitFor();
    const visible = await page.locator('table[aria-label="Workers"] thead th').evaluateAll((cells) => cells.filter((cell) => (cell as HTMLElement).offsetParent !== null).map((cell) => cell.textContent!.replace(/[▲▼]/g, '').trim()));
    expect(visible).toEqual(['Worker', 'State', 'Last heard']);
    const title = await page.locator('tbody tr').first().locator('td').first().evaluate((cell) => ({ width: cell.getBoundingClientRect().width, text: cell.querySelector('a')!.textContent }));
    expect(title.width).toBeGreaterThan(140);
    // the workers of dashboard-data.ts: their host and pid
    expect(title.text).toMatch(/^[\w-]+ · pid \d+$/);
    await screenshot(page, 'shell-workers-titles-phone');
    await view.context.close();
  }, TEST_TIMEOUT_MS);

  test('at desktop width the pages and the tools are all in view, with no menu button', async () => {
    const view = await signedIn(1280);
    const { page } = view;
    await page.goto('/queues');
    await page.locator('main .page-head h1').waitFor();
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    for (const label of ['Jobs', 'Queues', 'Workers', 'Alerts', 'Connections', 'Users']) expect(await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: label, exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    const { headerHeight, overflow } = await layout(page);
    expect(headerHeight).toBeLessThanOrEqual(52);
    expect(overflow).toBe(0);
    await screenshot(page, 'shell-desktop');
    await view.context.close();
  }, TEST_TIMEOUT_MS);
});
