/**
 * Starting the service the documented way (`npm start` = `bun run start` = `bun src/main.ts`)
 * and using it over HTTP like a first-time operator and an SDK would.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  getJson,
  ingest,
  isProcessAlive,
  listAllJobs,
  login,
  makeDataDir,
  startService,
  TEST_TIMEOUT_MS,
  cleanUpServices,
} from './service-process.ts';

const dirs = cleanUpServices();

describe('start as the README says', () => {
  test('bun run start with ADMIN_EMAIL/ADMIN_PASSWORD: health, login, connection, ingest 10, list them back', async () => {
    const dataDir = makeDataDir('readme');
    dirs.push(dataDir);
    const service = await startService({ dataDir, viaScript: true, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
    expect(service.output).toMatch(/recovered: snapshot seq 0, 0 records replayed/);
    expect(service.output).toContain(`created admin ${ADMIN_EMAIL} from ADMIN_EMAIL/ADMIN_PASSWORD`);
    expect(service.output).not.toContain('one-time password');

    const health = await getJson(service.baseUrl, '/api/health', '');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');

    const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const me = await getJson(service.baseUrl, '/api/auth/me', cookie);
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(ADMIN_EMAIL);

    const connection = await createConnection(service.baseUrl, cookie, 'readme worker');
    expect(connection.apiKey).toMatch(/^sk_/);

    const events = batchOfJobs(connection.id, 'readme', 10);
    const result = await ingest(service.baseUrl, connection.apiKey, events);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ accepted: 10, rejected: 0, skipped: 0, truncated: 0 });

    const jobs = await listAllJobs(service.baseUrl, cookie, 3); // several pages of 3
    expect(jobs.map((job) => job.externalId).sort()).toEqual(events.map((event) => event.job.externalId).sort());
    for (const job of jobs) {
      expect(job).toMatchObject({ connectionId: connection.id, state: 'queued', name: 'tasks.blackbox', framework: 'celery' });
    }
    const detail = await getJson(service.baseUrl, `/api/jobs/${jobs[0]!.id}`, cookie);
    expect(detail.status).toBe(200);
    expect(detail.body.externalId).toBe(jobs[0]!.externalId);
    expect(detail.body.stateHistory).toHaveLength(1);

    // `bun run start` forwards SIGTERM to the service, which shuts down cleanly.
    const servicePid = service.servicePid();
    expect(servicePid).toBeGreaterThan(0);
    expect(await service.stop()).toBe(0);
    expect(service.output).toMatch(/SIGTERM: shutting down/);
    expect(service.output).toMatch(/snapshot at seq \d+/);
  }, TEST_TIMEOUT_MS);

  test('without ADMIN_PASSWORD the first start prints a one-time password once; the second start does not', async () => {
    const dataDir = makeDataDir('otp');
    dirs.push(dataDir);
    const first = await startService({ dataDir });
    const lines = first.output.split('\n').filter((line) => line.includes('one-time password'));
    expect(lines).toHaveLength(1);
    const match = lines[0]!.match(/created admin (\S+) with one-time password: (\S+)/);
    expect(match).not.toBeNull();
    const [, email, password] = match!;
    expect(email).toBe('admin@localhost');
    expect(password!.length).toBeGreaterThanOrEqual(12);

    const cookie = await login(first.baseUrl, email!, password!);
    expect((await getJson(first.baseUrl, '/api/auth/me', cookie)).body.user.email).toBe(email!);
    expect(await first.stop()).toBe(0);

    const second = await startService({ dataDir });
    expect(second.output).not.toContain('one-time password');
    expect(second.output).not.toContain('created admin');
    // the generated password keeps working
    const again = await login(second.baseUrl, email!, password!);
    expect((await getJson(second.baseUrl, '/api/auth/me', again)).status).toBe(200);
    expect(await second.stop()).toBe(0);
  }, TEST_TIMEOUT_MS);
});

// The README's quick start is `npm start`; npm runs the script through a shell, so the
// script `exec`s bun: a SIGTERM to npm (what a supervisor sends) must reach the service.
test('SIGTERM to `npm start` (README quick start) reaches the service and shuts it down cleanly', async () => {
  const npm = Bun.which('npm');
  expect(npm).not.toBeNull();
  const dataDir = makeDataDir('npm-start');
  dirs.push(dataDir);
  const service = await startService({ dataDir, command: [npm!, 'start'], env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const servicePid = service.servicePid();
  expect(servicePid).not.toBe(service.pid); // npm -> bun (the script execs)
  try {
    service.proc.kill('SIGTERM');
    await service.waitForExit(20_000);
    const deadline = Date.now() + 10_000;
    while (isProcessAlive(servicePid) && Date.now() < deadline) await Bun.sleep(100);
    expect(isProcessAlive(servicePid)).toBe(false);
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(false); // a clean shutdown releases the lock
  } finally {
    if (isProcessAlive(servicePid)) process.kill(servicePid, 'SIGKILL'); // the orphan this test started
  }
}, TEST_TIMEOUT_MS);
