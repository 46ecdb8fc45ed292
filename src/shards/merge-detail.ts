/**
 * Whether a list route adds what the front needs to merge its answer with other shards'
 * (each item's cursor or sort key, see shard-merge.ts). Only a shard honours the header:
 * the front sets it on the requests it splits and drops it from every client's request.
 */
import type { AppDeps } from '../app-deps.ts';
import { SHARD_MERGE_HEADER } from './shard-protocol.ts';

export function mergeDetailAsked(deps: Pick<AppDeps, 'shard'>, request: Request): boolean {
  return deps.shard === true && request.headers.has(SHARD_MERGE_HEADER);
}
