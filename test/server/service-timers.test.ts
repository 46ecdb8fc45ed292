/**
 * The running service's own timers, as src/server.ts wires them: retention removes old
 * jobs without anyone asking, and a snapshot is taken when SNAPSHOT_LOG_MB of log has
 * accumulated (and not before), or when SNAPSHOT_INTERVAL_MINUTES has passed. The
 * functions they call are tested elsewhere; these tests fail when a timer is not started,
 * calls the wrong thing, or compares the wrong way. The service runs in this process on a
 * free loopback port with a temporary data directory and shortened check intervals.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { SERVICE_TIMERS, startService, type RunningService, type ServiceTimers } from '../../src/server.ts';
import { deadlineCheckIntervalMs } from '../../src/service/command-deadline-timer.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, createConnection, getJson, ingest, login } from '../blackbox/service-process.ts';

const HOUR_MS = 3_600_000;
const CHECK_MS = 20;
const running: Array<{ service: RunningService; dir: string }> = [];

afterEach(async () => {
  for (const { service, dir } of running.splice(0)) {
    await service.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

async function start(overrides: Partial<Config>, timers: Partial<ServiceTimers>) {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-timers-'));
  const config: Config = {
    // one store: these are the single thread's timers (a shard's run in its worker: test/shards/)
    ...loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, WORKERS: '1', ADMIN_EMAIL, ADMIN_PASSWORD, FSYNC: 'no' }),
    ...overrides,
  };
  const lines: string[] = [];
  /** the level a line was raised to (`severity` field), by line */
  const severities = new Map<string, unknown>();
  const log = (line: string, fields?: Record<string, unknown>): void => {
    lines.push(line);
    if (fields?.severity !== undefined) severities.set(line, fields.severity);
  };
  const service = await startService(config, log, { snapshotCheckIntervalMs: HOUR_MS, retentionIntervalMs: HOUR_MS, ...timers });
  running.push({ service, dir });
  const baseUrl = `http://127.0.0.1:${service.port}`;
  const cookie = await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(baseUrl, cookie, 'timers');
  return { service, config, dir, lines, severities, baseUrl, cookie, connection };
}

/** Polls until `condition` holds; fails naming `what` after `timeoutMs`. */
async function eventually(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(CHECK_MS);
  }
}

const snapshotLines = (lines: string[]) => lines.filter((line) => /^snapshot at seq \d+/.test(line));

describe('timers of the running service', () => {
  test('the production cadence: snapshot checks every 5 s, retention every minute', () => {
    expect(SERVICE_TIMERS).toEqual({ snapshotCheckIntervalMs: 5_000, retentionIntervalMs: 60_000 });
  });

  test('retention runs by itself: a job older than RETENTION_HOURS disappears, a recent one stays', async () => {
    const { baseUrl, cookie, connection } = await start({ retentionMs: HOUR_MS }, { retentionIntervalMs: CHECK_MS });
    const old = batchOfJobs(connection.id, 'old', 1, Date.now() - 2 * HOUR_MS);
    const recent = batchOfJobs(connection.id, 'recent', 1);
    const sent = await ingest(baseUrl, connection.apiKey, [...old, ...recent]);
    expect(sent.body.accepted).toBe(2);

    const externalIds = async () => ((await getJson(baseUrl, '/api/jobs', cookie)).body.data as Array<{ externalId: string }>).map((job) => job.externalId);
    await eventually('the old job removed by the retention timer', async () => !(await externalIds()).includes('old-0'));
    expect(await externalIds()).toEqual(['recent-0']);
  }, 30_000);

  test('a snapshot is taken once SNAPSHOT_LOG_MB of log has been written, not before', async () => {
    const logBytesMax = 64 * 1024;
    const { service, dir, lines, baseUrl, connection } = await start(
      { snapshotLogBytesMax: logBytesMax, snapshotIntervalMs: 24 * HOUR_MS },
      { snapshotCheckIntervalMs: CHECK_MS },
    );
    const store = service.opened.store;
    let batch = 0;
    const send = async () => expect((await ingest(baseUrl, connection.apiKey, batchOfJobs(connection.id, `b${batch++}`, 20))).status).toBe(200);

    // below the threshold: many checks pass without a snapshot
    while (store.logBytesSinceSnapshot < logBytesMax / 4) await send();
    const checksWaited = 25;
    await Bun.sleep(checksWaited * CHECK_MS);
    expect(snapshotLines(lines)).toEqual([]);
    expect(readdirSync(join(dir, 'log')).filter((name) => name.endsWith('.snap'))).toEqual([]);

    // past it: the next check snapshots, and the count starts over
    while (store.logBytesSinceSnapshot < logBytesMax) await send();
    const seqAtThreshold = store.lastSeq;
    await eventually('a snapshot after the log passed SNAPSHOT_LOG_MB', () => snapshotLines(lines).length > 0);
    const seq = Number(snapshotLines(lines)[0]!.match(/seq (\d+)/)![1]);
    expect(seq).toBeGreaterThanOrEqual(seqAtThreshold);
    expect(readdirSync(join(dir, 'log')).filter((name) => name.endsWith('.snap')).length).toBe(1);
    expect(store.logBytesSinceSnapshot).toBeLessThan(logBytesMax);
  }, 30_000);

  test('a log of exactly SNAPSHOT_LOG_MB is due', async () => {
    const { service, config, lines } = await start({ snapshotLogBytesMax: 1024 * 1024 * 1024, snapshotIntervalMs: 24 * HOUR_MS }, { snapshotCheckIntervalMs: CHECK_MS });
    // nothing else writes (retention runs hourly here): the threshold is met to the byte
    config.snapshotLogBytesMax = service.opened.store.logBytesSinceSnapshot;
    await eventually('a snapshot when the log reaches the threshold exactly', () => snapshotLines(lines).length > 0);
  }, 30_000);

  test('a snapshot that fails is logged, and the service goes on', async () => {
    // no snapshot is due until ours runs (a due timer could otherwise start first on a slow machine)
    const { service, config, lines, severities, baseUrl, connection } = await start({ snapshotLogBytesMax: 1024 * 1024 * 1024, snapshotIntervalMs: HOUR_MS }, { snapshotCheckIntervalMs: CHECK_MS });
    // a snapshot written behind the service's back: the timer's own attempt is refused while it runs
    let release = false;
    function* slowChunks(): Generator<number[]> {
      while (!release) yield [0];
    }
    const blocking = service.opened.store.writeSnapshot({ chunks: slowChunks() });
    config.snapshotIntervalMs = 50;
    await eventually('a logged snapshot failure', () => lines.some((line) => line.startsWith('snapshot failed: ') && line.includes('already being written')));
    expect(severities.get(lines.find((line) => line.startsWith('snapshot failed: '))!)).toBe('error');
    release = true;
    await blocking;
    expect((await ingest(baseUrl, connection.apiKey, batchOfJobs(connection.id, 'after', 1))).status).toBe(200);
  }, 30_000);

  test('the wait for confirmation is checked every tenth of it, between a quarter second and 10 s', () => {
    expect([1_000, 5_000, 60_000, 300_000, 86_400_000].map(deadlineCheckIntervalMs)).toEqual([250, 500, 6_000, 10_000, 10_000]);
  });

  test('a revoke no agent confirms within COMMAND_CONFIRM_SECONDS is withdrawn by itself, once, and the log says so', async () => {
    const { baseUrl, cookie, connection, lines, severities } = await start({ commandConfirmMs: 1_000 }, {});
    const running = { type: 'job_state_change', timestamp: new Date(Date.now() - 1_000).toISOString(), framework: 'celery', connectionId: connection.id, job: { externalId: 'left', name: 'tasks.x', state: 'active' } };
    expect((await ingest(baseUrl, connection.apiKey, [running])).body.accepted).toBe(1);
    const [job] = (await getJson(baseUrl, '/api/jobs', cookie)).body.data as Array<{ id: string }>;
    const revoked = await fetch(`${baseUrl}/api/jobs/${job!.id}/revoke`, { method: 'POST', headers: { cookie } });
    expect(((await revoked.json()) as { state: string }).state).toBe('cancelled');
    const askedAtMs = Date.now();
    const detail = async () => (await getJson(baseUrl, `/api/jobs/${job!.id}`, cookie)).body;
    await eventually('the unconfirmed revoke withdrawn', async () => (await detail()).lastCommand.status === 'expired');
    // not before the wait, and at most a check interval (a tenth of it) plus a loaded machine's slack after
    expect(Date.now() - askedAtMs).toBeGreaterThanOrEqual(1_000);
    expect(await detail()).toMatchObject({ state: 'active' });
    // over shards (WORKERS > 1) a shard's log line reaches the service's log a moment after its answers
    await eventually('the withdrawal logged', () => lines.some((line) => line.startsWith('commands: 1 of connection')));
    const withdrawn = lines.filter((line) => line.startsWith('commands: 1 of connection'));
    expect(withdrawn).toEqual([`commands: 1 of connection ${connection.id} withdrawn, unconfirmed after 1 s; their jobs show what the job system reported (is the agent running and polling?)`]);
    expect(severities.get(withdrawn[0]!)).toBe('warn');
    await Bun.sleep(300); // later checks find nothing more to withdraw
    expect(lines.filter((line) => line.startsWith('commands: '))).toHaveLength(1);
  }, 30_000);

  test('a snapshot is taken when SNAPSHOT_INTERVAL_MINUTES has passed, and only when something was written since', async () => {
    const { service, lines } = await start({ snapshotLogBytesMax: 1024 * 1024 * 1024, snapshotIntervalMs: 200 }, { snapshotCheckIntervalMs: CHECK_MS });
    const store = service.opened.store;
    const seqs = () => snapshotLines(lines).map((line) => Number(line.match(/seq (\d+)/)![1]));
    // the log is far below SNAPSHOT_LOG_MB, so only the interval can bring the snapshot that covers everything written
    await eventually('a snapshot after the interval covering the last record', () => seqs().includes(store.lastSeq));
    const taken = seqs().length;
    // nothing written since: later checks find the interval passed again but no log to cover
    await Bun.sleep(600);
    expect(seqs()).toHaveLength(taken);
  }, 30_000);
});
