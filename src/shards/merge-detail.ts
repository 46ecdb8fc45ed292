/**
 * Whether a list route adds what the front needs to merge its answer with other shards'
 * (each item's cursor or sort key, see shard-merge.ts). Only a shard honours the header:
 * the front sets it on the requests it splits and drops it from every client's request.
 * Its value is the instant the front made the read as of, by its clock. A cluster node asks
 * the same of another by the signed read scope instead (src/http/read-scope.ts).
 */
import type { AppDeps } from '../app-deps.ts';
import { readScopeOf } from '../http/read-scope.ts';
import { SHARD_MERGE_HEADER } from './shard-protocol.ts';

export function mergeDetailAsked(deps: Pick<AppDeps, 'shard'>, request: Request): boolean {
  return (deps.shard === true && request.headers.has(SHARD_MERGE_HEADER)) || readScopeOf(request)?.mergeNowMs !== undefined;
}

/**
 * The instant a split read is made as of: the front's, which every shard of the read is
 * given, so that reads whose window follows now (task metrics) read the same buckets on
 * every shard even when a shard's clock passes a bucket's edge between them; else undefined.
 */
export function mergeReadNowMs(deps: Pick<AppDeps, 'shard'>, request: Request): number | undefined {
  const scoped = readScopeOf(request)?.mergeNowMs;
  if (scoped !== undefined) return scoped;
  if (!mergeDetailAsked(deps, request)) return undefined;
  const nowMs = Number(request.headers.get(SHARD_MERGE_HEADER));
  return Number.isSafeInteger(nowMs) && nowMs > 0 ? nowMs : undefined;
}
