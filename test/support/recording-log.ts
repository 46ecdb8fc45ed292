/**
 * A record log that keeps a copy of every record (as a log would decode it), and the two
 * engines a test of durability compares with the live one: one that replayed those records,
 * one restored from the live engine's snapshot.
 */
import { Engine, type EngineRecord, type RecordLog } from '../../actors/engine.ts';

export function recordingLog(): RecordLog & { records: EngineRecord[] } {
  const records: EngineRecord[] = [];
  return {
    records,
    append: async (record) => {
      records.push(structuredClone(record) as EngineRecord);
      return records.length;
    },
  };
}

/** An engine fed `records` and one restored from `live`'s snapshot, both with `live`'s clock and limits. */
export function replayedAndRestored(live: Engine, records: readonly EngineRecord[]): [replayed: Engine, restored: Engine] {
  const fresh = () => new Engine({ clock: live.clock, log: { append: async () => 0 }, limits: live.limits });
  const replayed = fresh();
  for (const record of records) replayed.evolve(record);
  const restored = fresh();
  const restorer = restored.restorer();
  for (const chunk of live.takeSnapshot().chunks) restorer.restore(structuredClone(chunk));
  return [replayed, restored];
}
