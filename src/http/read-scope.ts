/**
 * The partitions one read is answered for (cluster mode, src/http/cluster-reads.ts): a node
 * asked by another to answer a read over several connections answers it for the connections
 * of the partitions it was asked for only, so that a partition two nodes keep is counted
 * once in the merged answer. The scope is signed by the asking node (forward-signature.ts)
 * or set by this node's own front for the part it answers itself; the access guard narrows
 * the request's `Access` by it, so every read that lists the user's connections
 * (`ConnectionService.readable`, `readableConnectionIds`) sees only those. Empty on a single
 * node and on a shard.
 */
import { partitionOf } from '../../actors/partition-of.ts';

export interface ReadScope {
  /** Answer for the connections of these partitions only. */
  partitions: readonly number[];
  /** Of how many (CLUSTER_PARTITIONS). */
  partitionCount: number;
  /** The read is one part of a merged read made as of this instant (src/shards/merge-detail.ts). */
  mergeNowMs?: number;
}

const scopes = new WeakMap<Request, ReadScope>();

export function scopeRead(request: Request, scope: ReadScope): void {
  scopes.set(request, scope);
}

export function readScopeOf(request: Request): ReadScope | undefined {
  return scopes.get(request);
}

/** Which connections a request may read given its scope; undefined: every one (no scope). */
export function connectionsInScope(request: Request): ((connectionId: string) => boolean) | undefined {
  const scope = scopes.get(request);
  if (scope === undefined) return undefined;
  const partitions = new Set(scope.partitions);
  return (connectionId) => partitions.has(partitionOf(connectionId, scope.partitionCount));
}
