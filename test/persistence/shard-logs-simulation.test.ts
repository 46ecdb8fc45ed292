/**
 * A log per shard on one disk (persistence/data-layout.ts): the accounts' store and each
 * shard's, in the directories of a layout, written concurrently (every shard's group commits
 * interleave on the simulated disk), then a crash at a random operation, a power loss or a
 * process kill. After every recovery each store, on its own, must hold a prefix of what was
 * appended to it, in order, with every record it acknowledged (under `always`): one shard's
 * crash-time state never depends on another's. And the layout file that says where the
 * stores are is replaced atomically: a crash at any operation of its replacement leaves the
 * old layout or the new one in force, never none.
 *
 * Replay one seed: PERSISTENCE_SIM_SEED=123 npx bun test test/persistence/shard-logs-simulation.test.ts
 */
import { describe, expect, test } from 'bun:test';
import { commitLayout, layoutStores, readLayout, removeStaleStores, type DataLayout } from '../../persistence/data-layout.ts';
import { openDurableStore, type DurableStore, type FsyncPolicy } from '../../persistence/durable-store.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { NO_FAULTS, SimulatedCrash, SimulatedStorage } from '../../persistence/simulated-storage.ts';
import { checkRecovered, recoverState, runWorkload, type SimulatedRecord } from '../support/store-workload.ts';

const DATA_DIR = 'data';
const ROUNDS = 3;

/** Each store's history and what it acknowledged, by directory. */
interface StoreHistory {
  records: SimulatedRecord[];
  acknowledgedThrough: number;
}

async function simulateShardedSeed(seed: number, fsync: FsyncPolicy): Promise<string[]> {
  const random = new SeededRandom(seed);
  const storage = new SimulatedStorage(random);
  const shards = 2 + random.int(3);
  const layout: DataLayout = { workers: shards, dir: 'shards-1' };
  const stores = layoutStores(DATA_DIR, layout);
  if (stores.kind !== 'sharded') throw new Error('a layout of shards');
  const dirs = [stores.accounts, ...stores.shards];
  const histories = new Map<string, StoreHistory>(dirs.map((dir) => [dir, { records: [], acknowledgedThrough: 0 }]));
  const trace: string[] = [];
  await storage.mkdirp(DATA_DIR);
  await commitLayout(storage, DATA_DIR, layout);

  for (let round = 0; round <= ROUNDS; round++) {
    storage.faults = { ...NO_FAULTS };
    expect(await readLayout(storage, DATA_DIR)).toEqual(layout);
    const opened: Array<{ dir: string; store: DurableStore }> = [];
    // every store recovers at once, as the shards' threads do at start
    await Promise.all(
      dirs.map(async (dir) => {
        const store = await openDurableStore({ dir, storage, fsync, segmentBytesMax: 150 + random.int(400), log: () => {} });
        const recovered = await recoverState(store, seed, round);
        const history = histories.get(dir)!;
        checkRecovered(recovered, history.records, fsync === 'always' ? history.acknowledgedThrough : 0, seed, round);
        history.records = recovered;
        history.acknowledgedThrough = recovered.length;
        opened.push({ dir, store });
      }),
    );
    trace.push(`round ${round}: ${dirs.map((dir) => histories.get(dir)!.records.length).join('/')}`);
    if (round === ROUNDS) break;
    storage.faults = random.chance(0.5) ? { writeFailureProbability: random.next() * 0.02, syncFailureProbability: random.next() * 0.02 } : { ...NO_FAULTS };
    const crashKind = random.chance(0.7) ? 'power-loss' : 'process-kill';
    storage.scheduleCrash(1 + random.int(400), crashKind);
    await Promise.all(
      opened.map(({ dir, store }) => {
        const history = histories.get(dir)!;
        return runWorkload(store, random, round, history.records, (seq) => {
          history.acknowledgedThrough = Math.max(history.acknowledgedThrough, seq);
        });
      }),
    );
    if (!storage.isDown) {
      if (crashKind === 'power-loss') storage.crash();
      else storage.killProcess();
    }
    storage.restart();
  }
  return trace;
}

/** Replaces the layout of `from` shards by one of `to`, crashing at operation `crashAt`; the layout in force after. */
async function layoutAfterCrash(seed: number, crashAt: number, crashKind: 'power-loss' | 'process-kill', from: DataLayout, to: DataLayout): Promise<DataLayout> {
  const storage = new SimulatedStorage(new SeededRandom(seed));
  await storage.mkdirp(DATA_DIR);
  if (from.dir !== null) await commitLayout(storage, DATA_DIR, from);
  storage.scheduleCrash(crashAt, crashKind);
  try {
    await commitLayout(storage, DATA_DIR, to);
    await removeStaleStores(storage, DATA_DIR, to);
  } catch (error) {
    if (!(error instanceof SimulatedCrash)) throw error;
  }
  if (!storage.isDown) crashKind === 'power-loss' ? storage.crash() : storage.killProcess();
  storage.restart();
  return readLayout(storage, DATA_DIR);
}

const onlySeed = process.env.PERSISTENCE_SIM_SEED;
const seeds = (first: number, count: number): number[] => (onlySeed ? [Number(onlySeed)] : Array.from({ length: count }, (_, index) => first + index));

describe('simulation: a log per shard on one disk', () => {
  test('always: every store keeps every record it acknowledged, in order, whatever the others did', async () => {
    const failures: string[] = [];
    for (const seed of seeds(30_001, 60)) await simulateShardedSeed(seed, 'always').catch((error: unknown) => failures.push((error as Error).message));
    expect(failures).toEqual([]);
  }, 120_000);

  test('no: every store recovers an in-order prefix of its own appends, never refusing to start', async () => {
    const failures: string[] = [];
    for (const seed of seeds(40_001, 30)) await simulateShardedSeed(seed, 'no').catch((error: unknown) => failures.push((error as Error).message));
    expect(failures).toEqual([]);
  }, 120_000);

  test('a seed replays exactly', async () => {
    expect(await simulateShardedSeed(7, 'always')).toEqual(await simulateShardedSeed(7, 'always'));
  });

  test('the layout is replaced atomically: a crash at any operation leaves the old one or the new one in force', async () => {
    const cases: Array<[DataLayout, DataLayout]> = [
      [{ workers: 1, dir: null }, { workers: 4, dir: 'shards-1' }],
      [{ workers: 4, dir: 'shards-1' }, { workers: 3, dir: 'shards-2' }],
      [{ workers: 3, dir: 'shards-2' }, { workers: 1, dir: null }],
    ];
    for (const [from, to] of cases) {
      const outcomes = new Set<string>();
      for (let crashAt = 1; crashAt <= 12; crashAt++) {
        for (const kind of ['power-loss', 'process-kill'] as const) {
          for (const seed of [1, 2, 3]) {
            const inForce = await layoutAfterCrash(seed, crashAt, kind, from, to);
            expect([from, to]).toContainEqual(inForce);
            outcomes.add(JSON.stringify(inForce));
          }
        }
      }
      // some crashes come before the change takes effect, some after
      expect(outcomes.size).toBe(2);
    }
  });
});
