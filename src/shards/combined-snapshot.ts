/**
 * One snapshot of a sharded service, as a single engine's snapshot would hold it: the
 * front's accounts and audit entries, then every shard's audit entries and connections,
 * then one `end`. A backup of a sharded
 * service is this (src/service/backup.ts), so it restores into any number of shards, and
 * the test app compares a sharded engine with a single one through it.
 *
 * The parts are captured at slightly different moments (each shard in its own tick): a
 * connection the accounts no longer know is left out, and one they know that no shard
 * captured yet is restored empty (recovery reconciles the connections with the accounts).
 */
import type { EngineSnapshot, SnapshotChunk } from '../../actors/engine-snapshot.ts';

export function combinedSnapshot(accounts: EngineSnapshot, shards: ReadonlyArray<Iterable<SnapshotChunk>>): EngineSnapshot {
  function* produce(): Generator<SnapshotChunk> {
    let known = new Set<string>();
    for (const chunk of accounts.chunks) {
      if (chunk.k === 'end') continue;
      if (chunk.k === 'accounts') known = new Set(chunk.data.connections.map((connection) => connection.id));
      yield chunk;
    }
    for (const shard of shards) {
      for (const chunk of shard) {
        if (chunk.k === 'header' || chunk.k === 'end' || chunk.k === 'accounts') continue;
        if (chunk.k === 'audit') {
          yield chunk;
          continue;
        }
        const connectionId = chunk.k === 'connection' ? chunk.id : chunk.connectionId;
        if (known.has(connectionId)) yield chunk;
      }
    }
    yield { k: 'end' };
  }
  return { chunks: produce(), release: () => accounts.release() };
}
