/**
 * Online backup: `npm run cli -- backup <dir>` against a service under concurrent ingest,
 * `restore` into a fresh directory, a service started on it, and its jobs compared with
 * what was acknowledged before the backup began (all there) and what was ever sent
 * (nothing invented).
 */
import { expect, test } from 'bun:test';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  cleanUpServices,
  createConnection,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  spawnService,
  startService,
  TEST_TIMEOUT_MS,
} from './service-process.ts';

const dirs = cleanUpServices();
const BATCH = 20;

function cli(dataDir: string, args: string[]) {
  return spawnService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD }, command: [process.execPath, 'src/cli/main.ts', ...args] });
}

test('a backup taken under ingest restores into a fresh directory with everything acknowledged before it', async () => {
  const dataDir = makeDataDir('backup-source');
  const backupDir = makeDataDir('backup-files');
  const restoredDir = join(makeDataDir('backup-restored'), 'data');
  dirs.push(dataDir, backupDir, restoredDir);
  const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, DAILY_EVENT_LIMIT: '0' } });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, 'backup');

  const acknowledged = new Set<string>();
  const sent = new Set<string>();
  let stop = false;
  let batch = 0;
  const ingestLoop = (async () => {
    while (!stop) {
      const events = batchOfJobs(connection.id, `b${batch++}`, BATCH);
      for (const event of events) sent.add(event.job.externalId);
      const result = await ingest(service.baseUrl, connection.apiKey, events);
      if (result.status !== 200 || result.body.accepted !== BATCH) throw new Error(`ingest: ${JSON.stringify(result)}`);
      for (const event of events) acknowledged.add(event.job.externalId);
      await Bun.sleep(20); // steady ingest, not a flood: the restored jobs are listed page by page below
    }
  })();
  while (acknowledged.size < 10 * BATCH) await Promise.race([ingestLoop, Bun.sleep(10)]); // an ingest failure surfaces here

  const acknowledgedBeforeBackup = new Set(acknowledged);
  const backup = cli(dataDir, ['backup', backupDir, '--url', service.baseUrl]);
  expect(await backup.waitForExit(30_000)).toBe(0);
  const acknowledgedAfterBackup = acknowledged.size;
  stop = true;
  await ingestLoop;
  expect(acknowledgedAfterBackup).toBeGreaterThan(acknowledgedBeforeBackup.size); // ingest really ran alongside
  const files = readdirSync(backupDir);
  expect(files).toHaveLength(1);
  expect(backup.output).toContain(`written to ${join(backupDir, files[0]!)}`);
  expect(existsSync(join(dataDir, 'backup-staging')) ? readdirSync(join(dataDir, 'backup-staging')) : []).toEqual([]);

  const restore = cli(dataDir, ['restore', join(backupDir, files[0]!), '--data-dir', restoredDir]);
  expect(await restore.waitForExit(30_000)).toBe(0);
  // restore never overwrites: the directory is no longer empty
  const again = cli(dataDir, ['restore', join(backupDir, files[0]!), '--data-dir', restoredDir]);
  expect(await again.waitForExit(30_000)).not.toBe(0);
  expect(again.output).toContain('is not empty');

  const restored = await startService({ dataDir: restoredDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const restoredCookie = await login(restored.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const jobs = new Set((await listAllJobs(restored.baseUrl, restoredCookie)).map((job) => job.externalId));
  for (const id of acknowledgedBeforeBackup) expect(jobs.has(id)).toBe(true);
  for (const id of jobs) expect(sent.has(id)).toBe(true);
  expect(await restored.stop()).toBe(0);
  expect(await service.stop()).toBe(0);
}, TEST_TIMEOUT_MS * 2);

test('a backup is a POST behind the cross-site checks: a GET or a foreign page takes none', async () => {
  const dataDir = makeDataDir('backup-method');
  dirs.push(dataDir);
  const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const admin = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const backupUrl = service.baseUrl + '/api/admin/backup';
  // a top-level navigation, a link or an image from another site: GET with the cookie
  const navigation = await fetch(backupUrl, { headers: { cookie: admin, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
  expect(navigation.status).toBe(404);
  expect(((await navigation.json()) as any).error.code).toBe('NOT_FOUND');
  // a foreign page's form post, and its fetch with a JSON body
  const form = await fetch(backupUrl, { method: 'POST', headers: { cookie: admin, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'x=1' });
  expect(form.status).toBe(415);
  const foreign = await fetch(backupUrl, { method: 'POST', headers: { cookie: admin, origin: 'https://evil.example' } });
  expect(foreign.status).toBe(403);
  expect(((await foreign.json()) as any).error.code).toBe('FORBIDDEN');
  const crossSite = await fetch(backupUrl, { method: 'POST', headers: { cookie: admin, 'sec-fetch-site': 'cross-site' } });
  expect(crossSite.status).toBe(403);
  expect(service.output).not.toContain('backup at seq');
  // the own page (or curl, which sends neither header) gets the file
  const own = await fetch(backupUrl, { method: 'POST', headers: { cookie: admin, origin: service.baseUrl } });
  expect(own.status).toBe(200);
  expect(own.headers.get('x-backup-seq')).toMatch(/^\d+$/);
  expect((await own.arrayBuffer()).byteLength).toBeGreaterThan(0);
  await service.waitFor(/backup at seq \d+/);
  expect(await service.stop()).toBe(0);
}, TEST_TIMEOUT_MS);

test('backups are for admins only, need the service, and restore refuses a damaged file', async () => {
  const dataDir = makeDataDir('backup-refusals');
  dirs.push(dataDir);
  const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const admin = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const created = await fetch(service.baseUrl + '/api/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: admin },
    body: JSON.stringify({ email: 'viewer@example.test', password: 'a long enough password' }),
  });
  expect(created.status).toBe(201);
  const viewer = await login(service.baseUrl, 'viewer@example.test', 'a long enough password');
  const refused = await fetch(service.baseUrl + '/api/admin/backup', { method: 'POST', headers: { cookie: viewer } });
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as any).error.code).toBe('FORBIDDEN');
  expect((await fetch(service.baseUrl + '/api/admin/backup', { method: 'POST' })).status).toBe(401);
  expect(service.output).not.toContain('backup at seq');
  expect(await service.stop()).toBe(0);

  const noService = cli(dataDir, ['backup', join(dataDir, 'out'), '--url', service.baseUrl]);
  expect(await noService.waitForExit(30_000)).not.toBe(0);
  expect(noService.output).toContain('no service answers');

  const damaged = join(dataDir, 'damaged.snap');
  writeFileSync(damaged, 'not a snapshot');
  const restore = cli(dataDir, ['restore', damaged, '--data-dir', join(dataDir, 'fresh')]);
  expect(await restore.waitForExit(30_000)).not.toBe(0);
  expect(restore.output).toContain('is not a complete backup');
}, TEST_TIMEOUT_MS);
