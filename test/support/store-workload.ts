/**
 * What the persistence simulations do to one store and check of it: a workload of appends
 * (some in bursts, concurrent), snapshots and pauses; recovery into the records it holds; and
 * the check that those are a prefix of everything appended, in order, holding every
 * acknowledged record (test/persistence/simulation.test.ts, shard-logs-simulation.test.ts).
 */
import { RecoveryRefusedError, type DurableStore } from '../../persistence/durable-store.ts';
import type { SeededRandom } from '../../persistence/seeded-random.ts';

export interface SimulatedRecord {
  seq: number;
  round: number;
  padding: string;
}

export async function recoverState(store: DurableStore, seed: number, round: number): Promise<SimulatedRecord[]> {
  const state: SimulatedRecord[] = [];
  try {
    const report = await store.recover({
      snapshotChunk: (chunk) => state.push(...(chunk as SimulatedRecord[])),
      record: (record, seq) => {
        const expectedSeq = state.length + 1;
        if (seq !== expectedSeq) throw new Error(`replayed seq ${seq} where ${expectedSeq} was next`);
        state.push(record as SimulatedRecord);
      },
    });
    if (report.snapshotSeq > 0 && state.length < report.snapshotSeq) throw new Error('snapshot shorter than its seq');
  } catch (error) {
    const kind = error instanceof RecoveryRefusedError ? 'recovery refused' : 'recovery failed';
    throw new Error(`seed ${seed}, round ${round}: ${kind}: ${(error as Error).message}`);
  }
  return state;
}

export function checkRecovered(
  recovered: SimulatedRecord[],
  history: SimulatedRecord[],
  acknowledgedThrough: number,
  seed: number,
  round: number,
): void {
  const fail = (problem: string) => {
    throw new Error(`seed ${seed}, round ${round}: ${problem}`);
  };
  if (recovered.length < acknowledgedThrough) fail(`lost acknowledged records: recovered ${recovered.length}, acknowledged ${acknowledgedThrough}`);
  if (recovered.length > history.length) fail(`recovered ${recovered.length} records but only ${history.length} were appended`);
  recovered.forEach((record, index) => {
    const appended = history[index];
    if (!appended || record.seq !== appended.seq || record.round !== appended.round || record.padding !== appended.padding) {
      fail(`record ${index + 1} differs: recovered ${JSON.stringify(record)}, appended ${JSON.stringify(appended)}`);
    }
  });
}

export async function runWorkload(
  store: DurableStore,
  random: SeededRandom,
  round: number,
  history: SimulatedRecord[],
  onAcknowledged: (seq: number) => void,
): Promise<void> {
  const inFlight: Promise<unknown>[] = [];
  let snapshotRunning = false;
  const steps = 20 + random.int(60);
  for (let step = 0; step < steps; step++) {
    const roll = random.next();
    if (roll < 0.6) {
      for (let burst = 1 + random.int(5); burst > 0; burst--) inFlight.push(appendOne(store, random, round, history, onAcknowledged));
    } else if (roll < 0.7 && !snapshotRunning) {
      snapshotRunning = true;
      const state = history.slice(0, store.lastSeq);
      const chunkSize = 1 + random.int(8);
      inFlight.push(
        store
          .writeSnapshot({ chunks: chunksOf(state, chunkSize) })
          .catch(() => undefined)
          .finally(() => {
            snapshotRunning = false;
          }),
      );
    } else if (roll < 0.85) {
      for (let turns = random.int(12); turns > 0; turns--) await Promise.resolve();
    } else {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  await Promise.allSettled(inFlight);
}

function appendOne(
  store: DurableStore,
  random: SeededRandom,
  round: number,
  history: SimulatedRecord[],
  onAcknowledged: (seq: number) => void,
): Promise<unknown> {
  const record: SimulatedRecord = { seq: store.lastSeq + 1, round, padding: 'x'.repeat(random.int(40)) };
  const appended = store.append(record);
  // A failed store refuses without taking a seq; otherwise the record now owns this seq.
  if (store.lastSeq === record.seq) history.push(record);
  return appended.then(onAcknowledged, () => undefined);
}

function* chunksOf<T>(values: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < values.length; start += size) yield values.slice(start, start + size);
}
