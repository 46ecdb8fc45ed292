/**
 * The real process's log (black box: `bun src/main.ts`, stdout and stderr read as text):
 * JSON lines under NODE_ENV=production, every one of them, with the sentences the service
 * has always printed as `msg` and their figures as fields; readable lines with
 * LOG_FORMAT=pretty, the same sentences. The harness finds the port in either.
 */
import { describe, expect, test } from 'bun:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, TEST_TIMEOUT_MS, batchOfJobs, cleanUpServices, createConnection, ingest, login, makeDataDir, startService } from '../blackbox/service-process.ts';

const dirs = cleanUpServices();

/** Starts, ingests, stops with SIGTERM (which snapshots), and returns what the process printed. */
async function runOnce(env: Record<string, string>) {
  const dataDir = makeDataDir('logs');
  dirs.push(dataDir);
  const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, ...env } });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, 'logs');
  expect((await ingest(service.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'job', 5))).status).toBe(200);
  expect(await service.stop()).toBe(0);
  return { port: service.port, lines: service.output.split('\n').filter((line) => line !== '') };
}

describe('service log', () => {
  test('under NODE_ENV=production every line is a JSON record with level, time, pid and the sentence as msg', async () => {
    const { port, lines } = await runOnce({ NODE_ENV: 'production' });

    const records = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
    // typeof, not expect.any(): bun 1.4.5's toMatchObject writes asymmetric matchers into the object it checks
    for (const record of records) {
      expect([typeof record.level, typeof record.time, typeof record.pid, typeof record.msg]).toEqual(['string', 'string', 'number', 'string']);
    }
    const find = (pattern: RegExp) => records.find((record) => pattern.test(record.msg as string)) ?? {};
    expect(find(/^recovered: snapshot seq 0, 0 records replayed in \d+ ms$/)).toMatchObject({ level: 'info', snapshotSeq: 0, records: 0 });
    // the engine names its own snapshot work: rows restored, then the lookups built at the snapshot's end
    const phases = find(/^recovery phases: /);
    expect(phases.msg).toMatch(/^recovery phases: read \d+ ms, decode \d+ ms, restore \d+ ms, lookups \d+ ms, replay \d+ ms, sync \d+ ms$/);
    expect(Object.keys(phases.phasesMs as object)).toEqual(['read', 'decode', 'restore', 'lookups', 'replay', 'sync']);
    expect(find(/^created admin /).msg).toBe(`created admin ${ADMIN_EMAIL} from ADMIN_EMAIL/ADMIN_PASSWORD`);
    expect(find(/^listening on /)).toMatchObject({ msg: expect.stringContaining(`http://127.0.0.1:${port} (data in `), port, fsync: 'always' });
    expect(find(/^SIGTERM: shutting down/).msg).toBe('SIGTERM: shutting down (snapshot, sync, unlock)');
    expect(find(/^snapshot at seq \d+: \d+ bytes in \d+ ms$/)).toMatchObject({ seq: expect.any(Number), bytes: expect.any(Number), durationMs: expect.any(Number) });
  }, TEST_TIMEOUT_MS);

  test('`npm --silent start` under NODE_ENV=production: the dashboard build before the service logs JSON records too, so every line is JSON', async () => {
    const npm = Bun.which('npm');
    expect(npm).not.toBeNull();
    const dataDir = makeDataDir('logs-npm-start');
    dirs.push(dataDir);
    // --silent: npm's own banner (`> jobwatch@0.1.0 start`) is npm's, not a log line
    const service = await startService({ dataDir, command: [npm!, '--silent', 'start'], env: { ADMIN_EMAIL, ADMIN_PASSWORD, NODE_ENV: 'production' } });
    service.proc.kill('SIGTERM');
    await service.waitForExit(20_000);
    const lines = service.output.split('\n').filter((line) => line !== '');
    const records = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
    const build = records.filter((record) => String(record.msg).startsWith('dashboard: '));
    expect(build.length).toBeGreaterThanOrEqual(2);
    expect(build.at(-1)).toMatchObject({ level: 'info', msg: expect.stringMatching(/^dashboard: total [\d.]+ KB \([\d.]+ KB gzip, budget [\d.]+ KB\)$/) });
    expect(records.findIndex((record) => String(record.msg).startsWith('dashboard: '))).toBeLessThan(records.findIndex((record) => String(record.msg).startsWith('listening on')));
  }, TEST_TIMEOUT_MS);

  test('with LOG_FORMAT=pretty every line is readable: UTC time, level, the same sentences', async () => {
    const { port, lines } = await runOnce({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' });

    for (const line of lines) expect(line).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] (INFO|WARN|ERROR|FATAL): \S/);
    const text = lines.join('\n');
    expect(text).toMatch(/INFO: recovered: snapshot seq 0, 0 records replayed in \d+ ms/);
    expect(text).toContain(`INFO: listening on http://127.0.0.1:${port} (data in `);
    expect(text).toContain('INFO: SIGTERM: shutting down (snapshot, sync, unlock)');
    expect(text).toMatch(/INFO: snapshot at seq \d+: \d+ bytes in \d+ ms \{"seq":\d+,"bytes":\d+,"durationMs":\d+\}/);
  }, TEST_TIMEOUT_MS);
});
