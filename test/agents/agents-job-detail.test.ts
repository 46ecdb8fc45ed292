/**
 * What the three real agents capture, in the job detail in Chromium: one redis-server (a
 * database per job system), jobwatch, and a BullMQ worker, a Celery worker and a Sidekiq
 * process, each with its agent as a user runs it. Each agent masks a nested password and
 * leaves out the arguments of the job `--omit-args` names; jobwatch masks nothing itself
 * here (REDACT_KEYS=none), so what the page shows masked the agent masked. A BullMQ job that
 * failed twice and then succeeded shows its three attempts. Screenshots land in
 * .tmp/screenshots/agents-detail-*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, login, makeDataDir, removeDir, REPO_ROOT, startService, type ServiceProcess } from '../blackbox/service-process.ts';
import { buildUi } from '../../ui/build.ts';
import { launchChromium, openPage, screenshot, signInThroughForm } from '../ui/browser.ts';
import { ChildOutput } from '../../agents/bullmq/test/support/child.js';
import { produce, startAgent, startRedis, startWorker, tempDir, type RedisServer } from '../../agents/bullmq/test/support/stack.js';
import { eventually } from '../../agents/bullmq/test/support/wait.js';

const SETUP_MS = 150_000;
const TEST_MS = 60_000;
const PYTHON = '/usr/bin/python3';
const CELERY_TESTS = join(REPO_ROOT, 'agents', 'celery', 'tests');
const SIDEKIQ = join(REPO_ROOT, 'agents', 'sidekiq');

let dir: string;
let dataDir: string;
let redis: RedisServer;
let service: ServiceProcess;
let cookie: string;
const processes: ChildOutput[] = [];

/** A process of the Celery or Sidekiq side, run from the repository root. */
const spawnProcess = (command: string[], env: Record<string, string>): ChildOutput => new ChildOutput(command, { cwd: REPO_ROOT, env: { ...process.env, ...env } });
let browser: Browser;
let page: Page;
/** the jobs each test looks at, by what they are */
const ids: Record<string, string> = {};

/** Runs a short command (a producer) and answers its last line of output, parsed. */
async function lastLineOf(command: string[], env: Record<string, string>): Promise<any> {
  const proc = Bun.spawn(command, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!);
}

const logs = () => processes.map((each) => each.output.slice(-3000)).join('\n-----\n');

async function detailOf(externalId: string, state: string): Promise<any> {
  return eventually(
    `${externalId} ${state} in jobwatch`,
    async () => {
      const { body } = await getJson(service.baseUrl, '/api/jobs?limit=100', cookie); // a dozen jobs in all
      const item = body.data.find((job: any) => job.externalId === externalId);
      if (item?.state !== state) return null;
      return (await getJson(service.baseUrl, `/api/jobs/${item.id}`, cookie)).body;
    },
    60_000,
    logs,
  );
}

beforeAll(async () => {
  await buildUi(() => undefined);
  dir = tempDir('detail');
  dataDir = makeDataDir('agents-detail');
  redis = await startRedis(dir);
  service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, REDACT_KEYS: 'none', DAILY_EVENT_LIMIT: '0' } });
  cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const [bullmq, celery, sidekiq] = [await createConnection(service.baseUrl, cookie, 'bullmq'), await createConnection(service.baseUrl, cookie, 'celery'), await createConnection(service.baseUrl, cookie, 'sidekiq')];
  const celeryBroker = `${redis.url}/1`;
  const sidekiqRedis = `${redis.url}/2`;

  // BullMQ: its queues exist before the agent starts, so it follows them live from its first scan
  processes.push(await startWorker(redis.url, { QUEUES: 'reports,ledger', WORKER_NAME: 'detail-1' }));
  await produce(redis.url, [
    { queue: 'reports', name: 'warm-up' },
    { queue: 'ledger', name: 'warm-up' },
  ]);
  const bullmqAgent = startAgent({ redisUrl: redis.url, jobwatchUrl: service.baseUrl, apiKey: bullmq.apiKey, spoolDir: join(dir, 'bullmq-spool'), extra: ['--omit-args', 'sign-in'] });
  processes.push(bullmqAgent);
  await bullmqAgent.waitFor(/queue ledger: first seen/, 30_000);
  await bullmqAgent.waitFor(/queue reports: first seen/, 30_000);

  // Celery: the end-to-end tests' app, a worker of it, and the agent reading the result backend
  const celeryEnv = { E2E_BROKER: celeryBroker, PYTHONPATH: CELERY_TESTS };
  processes.push(
    spawnProcess([PYTHON, '-m', 'celery', '-A', 'e2e_app', 'worker', '-E', '-c', '1', '-n', `detail-${process.pid}@%h`, '--without-mingle', '--without-gossip', '--loglevel', 'INFO'], celeryEnv),
    spawnProcess(
      [PYTHON, '-m', 'jobwatch_celery', '--broker', celeryBroker, '--result-backend', celeryBroker, '--url', service.baseUrl, '--api-key', celery.apiKey, '--spool-dir', join(dir, 'celery-spool'), '--omit-args', 'e2e_app.sign_in'],
      { PYTHONPATH: join(REPO_ROOT, 'agents', 'celery', 'src') },
    ),
  );

  // Sidekiq: the fixture app with the integration, and the collector
  processes.push(
    spawnProcess(['sidekiq', '-r', join(SIDEKIQ, 'test', 'fixtures', 'app.rb'), '-c', '2', '-q', 'default'], { REDIS_URL: sidekiqRedis, JOBWATCH_OMIT_ARGS: 'SignInJob' }),
    spawnProcess(
      ['ruby', join(SIDEKIQ, 'bin', 'jobwatch-sidekiq'), '--redis', sidekiqRedis, '--url', service.baseUrl, '--api-key', sidekiq.apiKey, '--spool-dir', join(dir, 'sidekiq-spool'), '--poll-interval', '1', '--omit-args', 'SignInJob'],
      {},
    ),
  );

  const [report, signIn, ledger] = await produce(redis.url, [
    {
      queue: 'reports',
      name: 'export-report',
      data: {
        userId: 42,
        account: { owner: 'ada', credentials: { password: 'hunter2' } },
        steps: [
          { log: 'loading 120 rows', progress: { stage: 'load', percent: 30 } },
          { log: 'rendering the PDF', progress: { stage: 'render', percent: 80 } },
        ],
        stepMs: 150,
        returnValue: { url: 'https://files.example/r-42.pdf', rows: 120 },
      },
    },
    { queue: 'reports', name: 'sign-in', data: { user: 'ada', password: 'hunter2' } },
    { queue: 'ledger', name: 'sync-ledger', data: { failAttempts: 2, ledger: 'EU-7' }, opts: { attempts: 3, backoff: { type: 'fixed', delay: 200 } } },
  ]);
  Object.assign(ids, { bullmqReport: `reports:${report}`, bullmqSignIn: `reports:${signIn}`, bullmqLedger: `ledger:${ledger}` });

  const [charge, celerySignIn] = await lastLineOf(
    [
      PYTHON,
      '-c',
      'import json, e2e_app\n' +
        "a = e2e_app.charge.delay({'owner': 'ada', 'login': {'password': 'hunter2'}}, 12.5, invoice_id='INV-7', card={'card_number': '4242424242424242', 'exp': '12/30'})\n" +
        "b = e2e_app.sign_in.delay('ada', 'hunter2')\n" +
        'print(json.dumps([a.id, b.id]))',
    ],
    celeryEnv,
  );
  Object.assign(ids, { celeryCharge: charge, celerySignIn });

  const [sidekiqCharge, sidekiqSignIn] = await lastLineOf(
    [
      'ruby',
      '-rjson',
      '-e',
      `require ${JSON.stringify(join(SIDEKIQ, 'test', 'fixtures', 'app.rb'))}\n` +
        'puts [ChargeJob.perform_async({ "owner" => "ada", "login" => { "password" => "hunter2" } }, 12.5, { "invoice_id" => "INV-8", "cards" => [{ "card_number" => "4242424242424242" }] }),\n' +
        '      SignInJob.perform_async("ada", "hunter2")].to_json',
    ],
    { REDIS_URL: sidekiqRedis, JOBWATCH_OMIT_ARGS: 'SignInJob' },
  );
  Object.assign(ids, { sidekiqCharge, sidekiqSignIn });

  browser = await launchChromium();
  page = (await openPage(browser, service.baseUrl)).page;
  await signInThroughForm(page, ADMIN_EMAIL, ADMIN_PASSWORD);
}, SETUP_MS);

afterAll(async () => {
  await browser?.close();
  await Promise.all(processes.map((each) => each.stop(5_000).catch(() => each.kill())));
  await service?.stop(5_000).catch(() => service.kill());
  await redis?.process.stop(5_000).catch(() => redis.process.kill());
  if (dir) removeDir(dir);
  if (dataDir) removeDir(dataDir);
}, 30_000);

/** Opens a job's detail page and answers the text of its Arguments, Result and Log sections. */
async function openDetail(job: any): Promise<{ args: string; result: string; body: string }> {
  await page.goto(`/jobs/${job.id}`);
  await page.getByRole('heading', { name: 'Arguments' }).waitFor();
  const section = (name: string) => page.locator(`h2:text-is("${name}") + *`).first().textContent();
  return { args: (await section('Arguments')) ?? '', result: (await section('Result')) ?? '', body: (await page.locator('main').textContent()) ?? '' };
}

describe("the three agents' arguments, results, logs and attempts in the job detail", () => {
  test('BullMQ: the data with its nested password masked, the return value, the progress object and the log lines; a job --omit-args names shows no arguments', async () => {
    const report = await detailOf(ids.bullmqReport!, 'completed');
    const shown = await openDetail(report);
    expect(shown.args).toContain('"userId": 42');
    expect(shown.args).toContain('"password": "[redacted]"');
    expect(shown.result).toContain('"url": "https://files.example/r-42.pdf"');
    expect(await page.getByLabel('Log').textContent()).toBe('loading 120 rows\nrendering the PDF');
    expect(shown.body).toContain('Log (2 lines, newest last)');
    expect(shown.body).toContain('render');
    expect(shown.body).not.toContain('hunter2');
    await screenshot(page, 'agents-detail-bullmq');
    const phone = (await openPage(browser, service.baseUrl, { width: 390 })).page;
    await signInThroughForm(phone, ADMIN_EMAIL, ADMIN_PASSWORD);
    await phone.goto(`/jobs/${report.id}`);
    await phone.getByRole('heading', { name: 'Arguments' }).waitFor();
    await screenshot(phone, 'agents-detail-bullmq-phone');
    await phone.context().close();

    const signIn = await detailOf(ids.bullmqSignIn!, 'completed');
    expect(signIn.args).toBeNull();
    expect((await openDetail(signIn)).args).toBe('none');
  }, TEST_MS);

  test('BullMQ: a job that failed twice and then succeeded shows its three attempts, each failed one with its error', async () => {
    const ledger = await detailOf(ids.bullmqLedger!, 'completed');
    expect(ledger.attempts.map((run: any) => [run.attempt, run.state, run.error])).toEqual([
      [1, 'failed', 'planned failure 1'],
      [2, 'failed', 'planned failure 2'],
      [3, 'completed', null],
    ]);
    await openDetail(ledger);
    const attempts = page.getByRole('list', { name: 'Attempts' });
    await attempts.waitFor();
    expect(await attempts.locator(':scope > li').count()).toBe(3);
    expect(await attempts.locator('.error-text').allTextContents()).toEqual(['planned failure 1', 'planned failure 2']);
    expect(await page.getByRole('heading', { name: 'Attempts (3)' }).count()).toBe(1);
    await attempts.scrollIntoViewIfNeeded();
    await screenshot(page, 'agents-detail-attempts');
  }, TEST_MS);

  test('Celery: args and kwargs, whole from the result backend, a nested password and a card number masked, and the result; a task --omit-args names shows no arguments', async () => {
    const charge = await detailOf(ids.celeryCharge!, 'completed');
    const shown = await openDetail(charge);
    expect(shown.args).toContain('"invoice_id": "INV-7"');
    expect(shown.args).toContain('"password": "[redacted]"');
    expect(shown.args).toContain('"card_number": "[redacted]"');
    expect(shown.result).toContain('"charged": 12.5');
    expect(shown.result).toContain('"token": "[redacted]"');
    expect(shown.body).not.toContain('hunter2');
    await screenshot(page, 'agents-detail-celery');
    const signIn = await detailOf(ids.celerySignIn!, 'completed');
    expect(signIn.args).toBeNull();
    expect(signIn.result).toBe('ada signed in');
  }, TEST_MS);

  test("Sidekiq: the job's args with a nested password masked, and no result (Sidekiq keeps none); a job --omit-args names shows no arguments", async () => {
    const charge = await detailOf(ids.sidekiqCharge!, 'completed');
    const shown = await openDetail(charge);
    expect(shown.args).toContain('"owner": "ada"');
    expect(shown.args).toContain('"password": "[redacted]"');
    expect(shown.args).toContain('"invoice_id": "INV-8"');
    expect(shown.result).toBe('none');
    expect(shown.body).not.toContain('hunter2');
    await screenshot(page, 'agents-detail-sidekiq');
    expect((await detailOf(ids.sidekiqSignIn!, 'completed')).args).toBeNull();
  }, TEST_MS);
});
