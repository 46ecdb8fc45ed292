/**
 * The service with 4 shards on worker threads (src/shards/sharded-service.ts, started in this
 * process on a loopback port with a temporary data directory): a shard that ends (its thread
 * gone, as an uncaught error ends it) answers its connections 503 with Retry-After and the
 * envelope while every other shard goes on serving, comes back by itself, and has lost
 * nothing it acknowledged; retention and snapshots run in each shard for its own connections.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { startService, type RunningService } from '../../src/server.ts';
import { shardOf } from '../../src/shards/shard-runtime.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, createConnection, getJson, ingest, login, type Connection } from '../blackbox/service-process.ts';

const SHARDS = 4;
const HOUR_MS = 3_600_000;
const running: Array<{ service: RunningService; dir: string }> = [];

afterEach(async () => {
  for (const { service, dir } of running.splice(0)) {
    await service.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

async function start(overrides: Partial<Config> = {}, timers = { snapshotCheckIntervalMs: HOUR_MS, retentionIntervalMs: HOUR_MS }) {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-shards-'));
  const config: Config = { ...loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, WORKERS: String(SHARDS), ADMIN_EMAIL, ADMIN_PASSWORD, FSYNC: 'always' }), ...overrides };
  const lines: string[] = [];
  const service = await startService(config, (line) => lines.push(line), timers);
  running.push({ service, dir });
  const baseUrl = `http://127.0.0.1:${service.port}`;
  const cookie = await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  return { service, dir, lines, baseUrl, cookie };
}

/** Connections until two shards keep some: the first on one, the second on another. */
async function onTwoShards(baseUrl: string, cookie: string): Promise<[Connection, Connection]> {
  const made: Connection[] = [];
  for (let i = 0; i < 40; i++) {
    const connection = await createConnection(baseUrl, cookie, `c${i}`);
    const other = made.find((each) => shardOf(each.id, SHARDS) !== shardOf(connection.id, SHARDS));
    if (other !== undefined) return [other, connection];
    made.push(connection);
  }
  throw new Error('40 connections on one shard');
}

async function eventually(what: string, condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

const jobsOf = async (baseUrl: string, cookie: string, connection: Connection) =>
  ((await getJson(baseUrl, `/api/jobs?connectionId=${connection.id}&limit=100`, cookie)).body.data as Array<{ externalId: string }>).map((job) => job.externalId).sort();

describe(`${SHARDS} shards on worker threads`, () => {
  test('a shard that ends answers its connections 503 with Retry-After until it is back (a bulk action says so for its ids); the others serve; nothing acknowledged is lost', async () => {
    const { service, baseUrl, cookie, lines } = await start();
    const [down, up] = await onTwoShards(baseUrl, cookie);
    const acknowledged: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const events = batchOfJobs(down.id, `acked-${batch}`, 20);
      expect((await ingest(baseUrl, down.apiKey, events)).status).toBe(200);
      acknowledged.push(...events.map((event) => event.job.externalId));
    }
    expect((await ingest(baseUrl, up.apiKey, batchOfJobs(up.id, 'other', 5))).status).toBe(200);

    const idsOf = async (connection: Connection) => ((await getJson(baseUrl, `/api/jobs?connectionId=${connection.id}&limit=1`, cookie)).body.data as Array<{ id: string }>).map((job) => job.id);
    const [downId, upId] = [(await idsOf(down))[0]!, (await idsOf(up))[0]!];
    const ended = shardOf(down.id, SHARDS);
    await service.shards!.links[ended]!.kill('ended by the test');
    const refused = await fetch(`${baseUrl}/api/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${down.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: batchOfJobs(down.id, 'while-down', 1) }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
    expect((await getJson(baseUrl, `/api/jobs?connectionId=${down.id}`, cookie)).status).toBe(503);
    // a read over every connection needs that shard too
    expect((await getJson(baseUrl, '/api/jobs', cookie)).status).toBe(503);
    const health = await getJson(baseUrl, '/api/health', '');
    expect(health.status).toBe(503);
    expect(health.body.shards.find((shard: { shard: number }) => shard.shard === ended).state).not.toBe('ready');
    // a bulk action over both: the running shard's job is answered by it, the ended shard's says why not
    const bulk = await fetch(`${baseUrl}/api/jobs/bulk/revoke`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: baseUrl },
      body: JSON.stringify({ ids: [downId, upId] }),
    });
    expect(bulk.status).toBe(200);
    const results = ((await bulk.json()) as { results: Array<{ id: string; success: boolean; error?: string }> }).results;
    console.log(`bulk revoke with shard ${ended} ended: ${JSON.stringify(results)}`);
    expect(results.map((result) => result.id)).toEqual([downId, upId]);
    expect(results[0]).toMatchObject({ success: false });
    expect(results[0]!.error).toMatch(/shard/);
    expect(results[1]).toMatchObject({ success: true });
    // every other shard goes on
    expect((await ingest(baseUrl, up.apiKey, batchOfJobs(up.id, 'meanwhile', 5))).status).toBe(200);
    expect(await jobsOf(baseUrl, cookie, up)).toHaveLength(10);

    await eventually('the shard back', async () => (await getJson(baseUrl, '/api/health', '')).status === 200);
    expect(lines.some((line) => line.includes(`shard ${ended} ended (ended by the test)`))).toBe(true);
    expect(await jobsOf(baseUrl, cookie, down)).toEqual(acknowledged.sort());
    expect((await ingest(baseUrl, down.apiKey, batchOfJobs(down.id, 'after', 1))).status).toBe(200);
    expect((await getJson(baseUrl, '/api/jobs', cookie)).body.pagination.total).toBe(acknowledged.length + 1 + 10);
  }, 120_000);

  test('each shard runs retention over its own connections and snapshots its own store when its log passes SNAPSHOT_LOG_MB', async () => {
    const { dir, baseUrl, cookie, lines } = await start({ retentionMs: HOUR_MS, snapshotLogBytesMax: 32 * 1024 }, { snapshotCheckIntervalMs: 20, retentionIntervalMs: 20 });
    const pair = await onTwoShards(baseUrl, cookie);
    for (const connection of pair) {
      const old = batchOfJobs(connection.id, 'old', 1, Date.now() - 2 * HOUR_MS);
      expect((await ingest(baseUrl, connection.apiKey, [...old, ...batchOfJobs(connection.id, 'recent', 1)])).body.accepted).toBe(2);
    }
    for (const connection of pair) await eventually('retention on its shard', async () => (await jobsOf(baseUrl, cookie, connection)).join() === 'recent-0');
    const [first] = pair;
    for (let batch = 0; batch < 30; batch++) await ingest(baseUrl, first.apiKey, batchOfJobs(first.id, `fill-${batch}`, 20));
    const shard = shardOf(first.id, SHARDS);
    await eventually('a snapshot of the shard', async () => lines.some((line) => line.startsWith(`shard ${shard}: store snapshot: seq `)));
    const layoutDir = readdirSync(dir).find((name) => name.startsWith('shards-'))!;
    expect(readdirSync(join(dir, layoutDir, `shard-${shard}`)).some((name) => name.endsWith('.snap'))).toBe(true);
  }, 120_000);
});
