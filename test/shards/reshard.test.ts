/**
 * Changing WORKERS between restarts moves the data and loses nothing (src/shards/reshard.ts):
 * a data directory of one store, as every version before shards wrote it, is read as it is
 * with one shard and moved into 4; from 4 into 3; from 3 back into one store. Each move is
 * also crashed (power loss or process kill) at every storage operation it makes, on a
 * simulated disk, and the next start must finish it: every time, the state opened whole is the
 * state before the move, and one layout is in force.
 */
import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, type EngineRecord } from '../../actors/engine.ts';
import { readLayout, type DataLayout } from '../../persistence/data-layout.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { SimulatedStorage } from '../../persistence/simulated-storage.ts';
import { openWholeDataDir, settleLayout, type DataDirAccess } from '../../src/shards/reshard.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { recordingLog } from '../support/recording-log.ts';
import { singleTestApp, T0, TEST_LIMITS } from '../support/test-app.ts';

const DATA_DIR = 'data';

/** Records of a small service's life: users, sessions, connections (one deleted), jobs, workers, queues, actions, retention. */
async function history(): Promise<EngineRecord[]> {
  const log = recordingLog();
  const t = await singleTestApp({ log, limits: { dailyEventLimit: 0 } });
  const cookie = await t.login();
  const keys: Array<{ id: string; apiKey: string }> = [];
  for (let i = 0; i < 7; i++) keys.push(await t.createConnection(cookie, `c${i}`));
  for (const [i, { id, apiKey }] of keys.entries()) {
    const events = [
      ...Array.from({ length: 12 }, (_, j) => jobEvent(id, T0 - j * 1_000, { externalId: `j${j}`, state: j % 3 === 0 ? 'failed' : 'queued', name: `tasks.n${j % 4}` })),
      workerEvent(id, T0, { externalId: `w${i}` }),
      queueEvent(id, T0, { name: `q${i}` }),
    ];
    expect((await t.ingest(apiKey, events)).status).toBe(200);
  }
  await t.request('DELETE', `/api/connections/${keys[2]!.id}`, { headers: { cookie } });
  const failed = (await t.request('GET', '/api/jobs?state=failed&limit=100', { headers: { cookie } })).json.data as Array<{ id: string }>;
  await t.request('POST', '/api/jobs/bulk/retry', { body: { ids: failed.slice(0, 6).map((job) => job.id) }, headers: { cookie } });
  t.clock.advance(60_000);
  await t.engine.commit({ t: 'retention', atMs: t.clock.nowMs() });
  return log.records;
}

const RECORDS = await history();
const NOW_MS = T0 + 3_600_000;

function access(storage: SimulatedStorage): DataDirAccess {
  return { dataDir: DATA_DIR, storage, fsync: 'always', clock: new ManualClock(NOW_MS), limits: TEST_LIMITS, log: () => {} };
}

/** One engine fed every record: what each layout must open to. */
function expectedDump() {
  const engine = new Engine({ clock: new ManualClock(NOW_MS), log: { append: async () => 0 }, limits: TEST_LIMITS });
  for (const record of RECORDS) engine.evolve(structuredClone(record));
  return dumpEngine(engine, NOW_MS);
}
const EXPECTED = expectedDump();

/** A data directory as a version before shards left it: one store at DATA_DIR/log with every record, half of them under a snapshot. */
async function storeOfOneVersion(storage: SimulatedStorage): Promise<void> {
  const store = await openDurableStore({ dir: `${DATA_DIR}/log`, storage, fsync: 'always', log: () => {} });
  await store.recover({ snapshotChunk: () => undefined, record: () => undefined });
  const engine = new Engine({ clock: new ManualClock(NOW_MS), log: store, limits: TEST_LIMITS });
  const half = Math.floor(RECORDS.length / 2);
  for (const record of RECORDS.slice(0, half)) await engine.commit(structuredClone(record));
  await store.writeSnapshot(engine.takeSnapshot());
  for (const record of RECORDS.slice(half)) await engine.commit(structuredClone(record));
  await store.close();
}

async function openedWhole(storage: SimulatedStorage) {
  const whole = await openWholeDataDir(access(storage));
  try {
    return { layout: whole.layout, dump: dumpEngine(whole.engine, NOW_MS) };
  } finally {
    await whole.close();
  }
}

/** The directory moved through `steps` (shard counts), each move completed. */
async function movedThrough(storage: SimulatedStorage, steps: number[]): Promise<void> {
  for (const workers of steps) await settleLayout(access(storage), workers);
}

describe('moving a data directory between shard counts', () => {
  test('one store is read as it is with one shard, moved into 4, then 3, then back into one store, equal each time', async () => {
    const storage = new SimulatedStorage(new SeededRandom(1));
    await storeOfOneVersion(storage);
    expect(await settleLayout(access(storage), 1)).toEqual({ workers: 1, dir: null });
    expect((await openedWhole(storage)).dump).toEqual(EXPECTED);
    for (const workers of [4, 3, 1]) {
      const layout = await settleLayout(access(storage), workers);
      expect(layout.workers).toBe(workers);
      const opened = await openedWhole(storage);
      expect(opened.layout).toEqual(layout);
      expect(opened.dump).toEqual(EXPECTED);
    }
    // the old stores are gone: only the layout in force holds files
    expect((await storage.list(DATA_DIR)).filter((name) => name === 'shards.json')).toEqual([]);
  });

  for (const [before, target] of [
    [[], 4],
    [[4], 3],
    [[4], 1],
  ] as Array<[number[], number]>) {
    test(`a move into ${target} shard(s) from ${before.length === 0 ? 'one store' : `${before[0]} shards`}, crashed at every storage operation, is finished by the next start`, async () => {
      const operations = await operationsOfMove(before, target);
      expect(operations).toBeGreaterThan(20);
      console.log(`a move into ${target}: ${operations} storage operations, each crashed once`);
      const inForce = new Set<string>();
      for (let crashAt = 1; crashAt <= operations; crashAt++) {
        // a power loss or a process kill, in turn
        for (const kind of [crashAt % 2 === 0 ? 'power-loss' : 'process-kill'] as const) {
          const storage = new SimulatedStorage(new SeededRandom(crashAt));
          await storeOfOneVersion(storage);
          await movedThrough(storage, before);
          storage.scheduleCrash(crashAt, kind);
          await settleLayout(access(storage), target).catch((error: unknown) => {
            // the crash, however a layer above the disk words it
            if (!storage.isDown) throw error;
          });
          if (!storage.isDown) kind === 'power-loss' ? storage.crash() : storage.killProcess();
          storage.restart();
          inForce.add(JSON.stringify(await readLayout(storage, DATA_DIR)));
          const finished: DataLayout = await settleLayout(access(storage), target);
          expect(finished.workers).toBe(target);
          const opened = await openedWhole(storage);
          expect({ crashAt, kind, dump: opened.dump }).toEqual({ crashAt, kind, dump: EXPECTED });
        }
      }
      // crashes before the new layout took effect and after it
      expect(inForce.size).toBe(2);
    }, 300_000);
  }
});

/** How many storage operations a move makes when nothing crashes. */
async function operationsOfMove(before: number[], target: number): Promise<number> {
  const storage = new SimulatedStorage(new SeededRandom(0));
  await storeOfOneVersion(storage);
  await movedThrough(storage, before);
  const start = storage.counters.operations;
  await settleLayout(access(storage), target);
  return storage.counters.operations - start;
}
