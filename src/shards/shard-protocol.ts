/**
 * The messages between the HTTP thread (the front) and a shard, over a worker thread's
 * port or, in tests, a MessageChannel in one thread (docs/architecture.md, "Shards"). One
 * port per shard carries everything in order: an accounts record posted before a request
 * is applied before that request is answered, which is what makes a login or a new
 * connection usable by the next request, whichever shard it reaches.
 */
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import type { EngineRecord } from '../../actors/engine.ts';
import type { StreamEventName } from '../../actors/stream/stream-hub.ts';
import type { ForwardedClient } from '../http/forward-signature.ts';

/** What both ends of a shard's channel need: a worker, a worker's `self`, or a MessagePort. */
export interface ShardPort {
  postMessage(message: unknown, transfer?: ArrayBuffer[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}

export type HeaderList = Array<[string, string]>;

/** Calls the front makes of a shard, answered by a `reply` (see ShardHost). */
export type ShardCall =
  /** a snapshot of the shard's store now, if its log grew since the last (a StoreMark) */
  | { what: 'snapshot' }
  /** snapshot, sync and close (a StoreMark); the shard answers nothing after it */
  | { what: 'stop' }
  /** the shard's Prometheus families as prom-client JSON, to be aggregated with the front's */
  | { what: 'metrics' }
  /** the shard's state as snapshot chunks (a backup, a ShardBackupPart): the connections it keeps, without the accounts */
  | { what: 'backup' }
  /** whether the shard's engine refuses writes (its log failed) */
  | { what: 'health' }
  /**
   * Which of these connections (in their order) keeps the job, queue, worker, alert rule or
   * channel a write by id names (`connectionOfTarget`): its id, or null when none here does
   */
  | { what: 'locate'; method: string; pathname: string; connectionIds: string[] }
  /** for each of `ids` (a bulk action's), which of these connections keeps that job here, or null */
  | { what: 'locateJobs'; ids: string[]; connectionIds: string[] };

export type ToShard =
  /** The accounts as the front has them, then the shard recovers its own log and says `ready`. */
  | { t: 'start'; accounts: SnapshotChunk[] }
  /** An accounts record the front committed (users, sessions, connections): applied in order, then `applied`. */
  | { t: 'accounts'; record: EngineRecord; ack: number }
  /**
   * An HTTP request for this shard's connections. Its body comes as the shard reads it: one
   * `body` chunk (or `bodyEnd`, `bodyAbort`) per `bodyPull`, so no more of it is read from the
   * client than the route reads, as on a single node (a refusal before reading reads nothing).
   */
  | { t: 'request'; id: number; method: string; url: string; headers: HeaderList; client: ForwardedClient; hasBody: boolean }
  | { t: 'body'; id: number; chunk: Uint8Array }
  | { t: 'bodyEnd'; id: number }
  /** the client went away or its body failed before its end */
  | { t: 'bodyAbort'; id: number; reason: string }
  /** Start building these connections' live events; answered `watched` once every earlier change was sent. */
  | { t: 'watch'; ack: number; connectionIds: string[] }
  /** Nobody watches it any more: its events are built until `graceUntilMs` (the front's resume grace), by the shard's clock. */
  | { t: 'unwatch'; connectionId: string; graceUntilMs: number }
  | { t: 'announceOffline' }
  | { t: 'call'; id: number; call: ShardCall };

export type FromShard =
  | { t: 'ready'; recovery: ShardRecoverySummary }
  | { t: 'response'; id: number; status: number; headers: HeaderList; body: ArrayBuffer }
  /** The route reads on: the front sends the next chunk of the request's body. */
  | { t: 'bodyPull'; id: number }
  /** The shard stopped reading a request's body (answered before its end): the front stops sending it. */
  | { t: 'bodyCancel'; id: number }
  /** Live events of this turn, in the order they were published: [connectionId, event, data] each. */
  | { t: 'live'; events: Array<[string, StreamEventName, unknown]> }
  | { t: 'skipped'; connectionId: string }
  | { t: 'watched'; ack: number }
  | { t: 'applied'; ack: number }
  | { t: 'reply'; id: number; value?: unknown; error?: string }
  /** The shard's log failed: it refuses writes; the front restarts it so it recovers from what is durable. */
  | { t: 'halted'; message: string }
  /** A log line of the shard, written by the front's logger (a worker has none of its own). */
  | { t: 'log'; line: string; fields?: Record<string, unknown> };

/**
 * Where a shard's store stands after a snapshot or a stop: its last sequence (its newest
 * snapshot covers it) and the bytes of the snapshot just written (0: none was needed).
 */
export interface StoreMark {
  seq: number;
  bytes: number;
}

/** A shard's part of a backup: its connections as snapshot chunks, and the log sequence they are the state after. */
export interface ShardBackupPart {
  seq: number;
  chunks: SnapshotChunk[];
}

/** What a shard's recovery did, for the front's log line. */
export interface ShardRecoverySummary {
  snapshotSeq: number;
  recordsReplayed: number;
  truncatedBytes: number;
  durationMs: number;
  connections: number;
}

/** Set by the front on a request it splits over shards: the shard adds what the merge needs (shard-merge.ts). */
export const SHARD_MERGE_HEADER = 'x-jobwatch-shard-merge';
