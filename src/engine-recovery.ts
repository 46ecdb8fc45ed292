/**
 * What recovery hands the engine, the same for a start and for `verify`: each snapshot
 * chunk to the restorer (its shape and order checked), the end of the snapshot (a single
 * node's holds the whole state, accounts included), each log record with its shape checked.
 */
import type { SnapshotRestorer } from '../actors/engine-snapshot.ts';
import type { Engine } from '../actors/engine.ts';
import type { RecoveryHandler } from '../persistence/durable-store.ts';

export interface EngineRecoveryHandler extends RecoveryHandler {
  restorer: SnapshotRestorer;
}

/** `wholeState`: the snapshots are of the whole state (a single node), not of one partition each (a cluster). */
export function engineRecoveryHandler(engine: Engine, { wholeState }: { wholeState: boolean }): EngineRecoveryHandler {
  const restorer = engine.restorer();
  return {
    restorer,
    snapshotChunk: (chunk) => restorer.restore(chunk),
    snapshotEnded: () => restorer.snapshotEnded({ wholeState }),
    snapshotChunkPhases: () => [
      { name: 'restore', ms: restorer.timings.chunksMs },
      { name: 'lookups', ms: restorer.timings.lookupsMs },
    ],
    record: (record) => engine.replay(record),
  };
}
