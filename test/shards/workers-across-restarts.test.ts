/**
 * WORKERS changed between restarts of the real service (black box: `bun src/main.ts`, its
 * data directory looked at only as files): a directory written with one store is read as it
 * is, then moved into 4 shards by a start that is killed (SIGKILL) at a random moment of the
 * move, finished by the next start; more is acknowledged, the service killed again, started
 * with 2 shards (the shards' logs replayed into the move), then with one store again. Every
 * acknowledged job, the session cookie and the API keys survive each step.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
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
  removeDir,
  seededRandom,
  spawnService,
  startService,
  testSeed,
  waitUntilServing,
  type Connection,
} from '../blackbox/service-process.ts';

const dataDir = makeDataDir('workers-restarts');
afterAll(() => {
  cleanUpServices();
  removeDir(dataDir);
});

const env = (workers: number) => ({ ADMIN_EMAIL, ADMIN_PASSWORD, WORKERS: String(workers), FSYNC: 'always' });

async function ingestAll(baseUrl: string, connections: Connection[], prefix: string, acknowledged: Set<string>): Promise<void> {
  for (const [i, connection] of connections.entries()) {
    const events = batchOfJobs(connection.id, `${prefix}-c${i}`, 50);
    const answer = await ingest(baseUrl, connection.apiKey, events);
    expect(answer.status).toBe(200);
    for (const event of events) acknowledged.add(event.job.externalId);
  }
}

async function expectEverything(baseUrl: string, cookie: string, acknowledged: Set<string>): Promise<void> {
  const listed = await listAllJobs(baseUrl, cookie, 97);
  expect(new Set(listed.map((job) => job.externalId))).toEqual(acknowledged);
}

describe('WORKERS changed between restarts', () => {
  test('one store, a move into 4 shards killed midway, 4 shards killed under ingest, then 2, then one store: nothing acknowledged is lost', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    console.log(`workers-across-restarts seed ${seed} (replay with BLACKBOX_SEED=${seed})`);
    const acknowledged = new Set<string>();

    const one = await startService({ dataDir, env: env(1) });
    const cookie = await login(one.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const connections: Connection[] = [];
    for (let i = 0; i < 6; i++) connections.push(await createConnection(one.baseUrl, cookie, `c${i}`));
    for (let round = 0; round < 4; round++) await ingestAll(one.baseUrl, connections, `one-${round}`, acknowledged);
    expect(await one.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'shards.json'))).toBe(false);

    // the move into 4 shards, killed at a random moment of it
    const moving = spawnService({ dataDir, env: env(4) });
    await moving.waitFor(/moving it into 4 shards/, 30_000);
    await Bun.sleep(Math.floor(random() * 400));
    await moving.kill();

    const four = await waitUntilServing(spawnService({ dataDir, env: env(4) }), 60_000);
    // the killed start finished the move, or this one did it again from the one store still in force
    expect(moving.output + four.output).toMatch(/moved 6 connections and 1200 jobs from one store \(log\) into 4 shards/);
    expect(existsSync(join(dataDir, 'shards.json'))).toBe(true);
    await expectEverything(four.baseUrl, cookie, acknowledged);
    await ingestAll(four.baseUrl, connections, 'four', acknowledged);
    await four.kill();

    // 4 shards' logs (not snapshotted: the kill) moved into 2
    const two = await startService({ dataDir, env: env(2) }, 60_000);
    expect(two.output).toMatch(/moving it into 2 shards/);
    await expectEverything(two.baseUrl, cookie, acknowledged);
    await ingestAll(two.baseUrl, connections, 'two', acknowledged);
    expect(await two.stop()).toBe(0);

    const back = await startService({ dataDir, env: env(1) }, 60_000);
    expect(back.output).toMatch(/moving it into one store \(log\)/);
    expect(existsSync(join(dataDir, 'shards.json'))).toBe(false);
    expect(readdirSync(join(dataDir, 'log')).some((name) => name.endsWith('.snap'))).toBe(true);
    await expectEverything(back.baseUrl, cookie, acknowledged);
    expect((await ingest(back.baseUrl, connections[0]!.apiKey, batchOfJobs(connections[0]!.id, 'last', 1))).status).toBe(200);
    expect(await back.stop()).toBe(0);
  }, 300_000);
});
