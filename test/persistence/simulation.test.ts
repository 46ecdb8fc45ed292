import { describe, expect, test } from 'bun:test';
import { openDurableStore } from '../../persistence/durable-store.ts';
import type { FsyncPolicy } from '../../persistence/durable-store.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { NO_FAULTS, SimulatedStorage } from '../../persistence/simulated-storage.ts';
import { checkRecovered, recoverState, runWorkload, type SimulatedRecord } from '../support/store-workload.ts';

/**
 * Deterministic simulation of the disk: per seed, several rounds of recover -> random appends,
 * snapshots and injected faults -> a crash at a random operation: mostly a power loss,
 * sometimes a process kill that leaves unsynced bytes for the next process to read. After every
 * recovery the state must be a prefix of everything ever appended, in order, and
 * (under `always`) must hold every acknowledged record; whatever it holds beyond that
 * is unacknowledged records that happened to reach the disk. Recovery must never
 * refuse: every crash here is one the design promises to survive.
 *
 * Every run is a pure function of its seed. To replay a failing seed:
 *   PERSISTENCE_SIM_SEED=123 npx bun test test/persistence/simulation.test.ts
 * To search wider: PERSISTENCE_SIM_SEEDS=5000 (seeds per policy test).
 */
interface SeedOutcome {
  /** Records recovered after each crash; two runs of one seed must match exactly. */
  trace: string[];
}

const ROUNDS = 3;
const DIR = 'data';

async function simulateSeed(seed: number, fsync: FsyncPolicy): Promise<SeedOutcome> {
  const random = new SeededRandom(seed);
  const storage = new SimulatedStorage(random);
  const trace: string[] = [];
  // Everything appended with a seq, acknowledged or not: history[i] has seq i + 1.
  let history: SimulatedRecord[] = [];
  let acknowledgedThrough = 0;

  for (let round = 0; round <= ROUNDS; round++) {
    storage.faults = { ...NO_FAULTS };
    const store = await openDurableStore({ dir: DIR, storage, fsync, segmentBytesMax: 150 + random.int(500), log: () => {} });
    const recovered = await recoverState(store, seed, round);
    checkRecovered(recovered, history, fsync === 'always' ? acknowledgedThrough : 0, seed, round);
    trace.push(`round ${round}: recovered ${recovered.length} of ${history.length}, acknowledged ${acknowledgedThrough}`);
    history = recovered;
    acknowledgedThrough = recovered.length;
    if (round === ROUNDS) break;

    storage.faults = random.chance(0.5)
      ? { writeFailureProbability: random.next() * 0.03, syncFailureProbability: random.next() * 0.03 }
      : { ...NO_FAULTS };
    const crashKind = random.chance(0.7) ? 'power-loss' : 'process-kill';
    storage.scheduleCrash(1 + random.int(200), crashKind);
    await runWorkload(store, random, round, history, (seq) => {
      acknowledgedThrough = Math.max(acknowledgedThrough, seq);
    });
    if (!storage.isDown) {
      if (crashKind === 'power-loss') storage.crash();
      else storage.killProcess();
    }
    storage.restart();
  }
  return { trace };
}

async function failingSeeds(seeds: number[], fsync: FsyncPolicy): Promise<string[]> {
  const failures: string[] = [];
  for (const seed of seeds) {
    await simulateSeed(seed, fsync).catch((error: unknown) => failures.push((error as Error).message));
  }
  return failures;
}

const onlySeed = process.env.PERSISTENCE_SIM_SEED;
const seedsPerTest = Number(process.env.PERSISTENCE_SIM_SEEDS ?? 0);
const seedRange = (first: number, count: number): number[] =>
  onlySeed ? [Number(onlySeed)] : Array.from({ length: seedsPerTest || count }, (_, index) => first + index);

describe('simulation: crash, recover, check', () => {
  test('always: seeds keep every acknowledged record, in order, and nothing foreign', async () => {
    expect(await failingSeeds(seedRange(1, 200), 'always')).toEqual([]);
  });

  test('no: seeds recover an in-order prefix of what was appended, never refusing to start', async () => {
    expect(await failingSeeds(seedRange(10_001, 100), 'no')).toEqual([]);
  });

  test('everysec: seeds recover an in-order prefix of what was appended, never refusing to start', async () => {
    expect(await failingSeeds(seedRange(20_001, 50), 'everysec')).toEqual([]);
  });

  test('a seed replays exactly', async () => {
    for (const seed of [7, 42]) {
      expect((await simulateSeed(seed, 'always')).trace).toEqual((await simulateSeed(seed, 'always')).trace);
    }
  });
});
