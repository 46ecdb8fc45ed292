/**
 * The running service keeps its data directory private under a umask of 000: after
 * ingest, a backup and a clean stop every directory is 0700 and every file 0600 (log,
 * snapshots, lock, session secret, the backup the CLI wrote); and a data directory an
 * older version left readable (0644/0755) is tightened at start, with a log line saying so.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  cleanUpServices,
  createConnection,
  ingest,
  login,
  logDir,
  makeDataDir,
  spawnService,
  startService,
  TEST_TIMEOUT_MS,
} from './service-process.ts';

const dirs = cleanUpServices();
let savedUmask = 0;
beforeEach(() => {
  savedUmask = process.umask(0); // inherited by the services and the CLI spawned below
});
afterEach(() => {
  process.umask(savedUmask);
});

/** `path mode` for everything under `root`, itself included; directories end in a slash. */
function modesUnder(root: string): string[] {
  const lines: string[] = [];
  const walk = (path: string, name: string): void => {
    const stats = lstatSync(path);
    lines.push(`${name}${stats.isDirectory() ? '/' : ''} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const child of readdirSync(path)) walk(join(path, child), `${name}/${child}`);
  };
  walk(root, '.');
  return lines;
}

const privateModes = (lines: string[]): string[] => lines.map((line) => line.replace(/ \d+$/, line.split(' ')[0]!.endsWith('/') ? ' 700' : ' 600'));

test('under umask 000 everything the service and the CLI backup write is private; an older, readable data directory is tightened at start', async () => {
  const dataDir = makeDataDir('modes');
  const backupDir = join(makeDataDir('modes-backup'), 'out');
  dirs.push(dataDir, join(backupDir, '..'));
  const env = { ADMIN_EMAIL, ADMIN_PASSWORD, DAILY_EVENT_LIMIT: '0' };
  const first = await startService({ dataDir, env });
  const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(first.baseUrl, cookie, 'modes');
  expect((await ingest(first.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'modes', 10))).status).toBe(200);
  const backup = spawnService({ dataDir, env, command: [process.execPath, 'src/cli/main.ts', 'backup', backupDir, '--url', first.baseUrl] });
  expect(await backup.waitForExit(30_000)).toBe(0);
  const running = modesUnder(dataDir);
  expect(await first.stop()).toBe(0);

  const stopped = modesUnder(dataDir);
  // the accounts' store: the only one (log), or the accounts' own with shards
  const store = `./${relative(dataDir, logDir(dataDir))}/`;
  expect(stopped.some((line) => line.startsWith(store) && line.includes('.snap '))).toBe(true);
  expect(running.some((line) => line.startsWith('./LOCK '))).toBe(true);
  expect(stopped.some((line) => line.startsWith('./session-secret '))).toBe(true);
  expect(running).toEqual(privateModes(running));
  expect(stopped).toEqual(privateModes(stopped));
  const backupModes = modesUnder(backupDir);
  expect(backupModes.some((line) => line.endsWith('.snap 600'))).toBe(true);
  expect(backupModes).toEqual(privateModes(backupModes));

  // what an older version left: readable by group and others
  for (const line of stopped) {
    const path = join(dataDir, line.split(' ')[0]!);
    chmodSync(path, line.split(' ')[0]!.endsWith('/') ? 0o755 : 0o644);
  }
  const second = await startService({ dataDir, env });
  const tightened = await second.waitFor(/removed group\/other access from (\d+) path\(s\) under [^:]+: (.*)/);
  expect(Number(tightened[1])).toBe(stopped.length);
  expect(tightened[2]).toContain('. 0755 -> 0700');
  const afterStart = modesUnder(dataDir);
  expect(afterStart).toEqual(privateModes(afterStart));
  expect(await second.stop()).toBe(0);
}, TEST_TIMEOUT_MS * 2);
