/**
 * One process per data directory: a second one refuses to start and names the pid of the
 * first; the first goes on serving; once the first is gone (even by SIGKILL) the
 * directory can be opened again.
 */
import { expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  spawnService,
  startService,
  TEST_TIMEOUT_MS,
  cleanUpServices,
} from './service-process.ts';

const dirs = cleanUpServices();

test('a second process on the same DATA_DIR refuses to start and names the pid holding it', async () => {
  const dataDir = makeDataDir('lock');
  dirs.push(dataDir);
  const env = { ADMIN_EMAIL, ADMIN_PASSWORD };
  const lockPath = join(dataDir, 'LOCK');

  const first = await startService({ dataDir, env });
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(first.pid));
  const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(first.baseUrl, cookie, 'lock');
  expect((await ingest(first.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'lock-a', 3))).body.accepted).toBe(3);

  const second = spawnService({ dataDir, env });
  const exitCode = await second.waitForExit(30_000);
  expect(exitCode).not.toBe(0);
  expect(second.output).toContain(`is in use by another process (pid ${first.pid})`);
  expect(second.output).toContain('stop that process first');
  expect(second.output).not.toContain('listening on');
  expect(second.output).not.toContain('recovered');

  // the CLI (docs/api.md: "while the server runs it refuses and names the server's pid") too
  const cli = spawnService({ dataDir, env, command: [process.execPath, 'src/cli/main.ts', 'connection', 'list'] });
  expect(await cli.waitForExit(30_000)).not.toBe(0);
  expect(cli.output).toContain(`is in use by another process (pid ${first.pid})`);

  // the refused processes neither stole nor removed the lock, and the first one still works
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(first.pid));
  expect((await ingest(first.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'lock-b', 3))).body.accepted).toBe(3);
  expect(await listAllJobs(first.baseUrl, cookie)).toHaveLength(6);

  // a clean stop releases the lock
  expect(await first.stop()).toBe(0);
  expect(existsSync(lockPath)).toBe(false);

  // a SIGKILLed holder leaves its LOCK behind; the next start takes it over and says so
  const third = await startService({ dataDir, env });
  await third.kill();
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(third.pid));
  const fourth = await startService({ dataDir, env });
  expect(fourth.output).toContain(`the process that held it (pid ${third.pid}) is no longer running`);
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(fourth.pid));
  expect(await listAllJobs(fourth.baseUrl, cookie)).toHaveLength(6);
  expect(await fourth.stop()).toBe(0);
}, TEST_TIMEOUT_MS);

/**
 * A supervisor restarts at once after a SIGKILL, while the killed process may still be an
 * unreaped zombie (its parent has not waited for it yet). The parent here never reaps it,
 * so the zombie is certain; the new process must start anyway.
 */
test('a restart right after kill -9, while the killed process is still a zombie, starts', async () => {
  const dataDir = makeDataDir('lock-zombie');
  dirs.push(dataDir);
  const env = { ADMIN_EMAIL, ADMIN_PASSWORD };
  const nonReapingParent = "import subprocess, sys, time\np = subprocess.Popen(sys.argv[1:])\ntime.sleep(600)";
  const first = await startService({ dataDir, env, command: ['python3', '-c', nonReapingParent, process.execPath, 'src/main.ts'] });
  const killedPid = first.servicePid();
  const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(first.baseUrl, cookie, 'zombie');
  expect((await ingest(first.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'zombie', 3))).body.accepted).toBe(3);

  process.kill(killedPid, 'SIGKILL');
  const second = await startService({ dataDir, env });
  // the scenario was real: the killed process was (and is) a zombie its parent never reaped
  expect(readFileSync(`/proc/${killedPid}/stat`, 'utf8')).toMatch(/^\d+ \(.*\) Z /);
  expect(second.output).toContain(`the process that held it (pid ${killedPid}) is no longer running`);
  expect(await listAllJobs(second.baseUrl, cookie)).toHaveLength(3);
  expect(await second.stop()).toBe(0);
  await first.stop();
}, TEST_TIMEOUT_MS);
