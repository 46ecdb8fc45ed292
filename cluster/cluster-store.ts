/**
 * The DurableStore of cluster mode (docs/cluster.md, "Layout, the store, recovery and
 * handovers"): one JetStream stream
 * whose subjects are the partitions' (`<prefix>.p.<n>`: the records of the connections of
 * partition n) and the accounts' (`<prefix>.accounts`: users, sessions, connections,
 * keys). Each partition has one writer, the holder of its lease, and is kept (a hot
 * replica) by the nodes partition-keeping.ts names: its writer and standbys; the accounts
 * by every node.
 *
 * - planKeeping(): before recovery, which partitions this node keeps (the others are
 *   neither recovered nor followed until taken up).
 * - recover(): download the kept partitions' snapshot objects and restore them in sequence,
 *   create the connections the accounts know and no snapshot has, then replay the stream
 *   in stream order (causal order) from the oldest covered sequence to its end; each
 *   partition's reader skips what its snapshot covers. Finally drop the connections the
 *   accounts no longer know.
 * - follow(): ONE ordered consumer over every subject keeps the replica current, in stream
 *   order; a partition this node writes or does not keep is skipped.
 * - takeUp(key) / letGo(key): start or stop keeping a partition while following
 *   (PartitionLog.takeUp holds the follower's messages back meanwhile).
 * - append(record): routed to the partition's writer by the record (connection records by
 *   partitionOf(connectionId), a partitioned retention by its partition, everything else
 *   to accounts); throws SERVICE_UNAVAILABLE synchronously, before the engine evolves
 *   anything, when this node does not write that partition.
 * - takeOver(key, epoch) / release(key): PartitionOwnership's hooks.
 *
 * Sequences are stream sequences: one stream, so one order over every partition, and a
 * replica's applied sequence answers "has this node seen that write".
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { ALERT_RECORD_TYPES } from '../actors/alerts/alert-records.ts';
import { MARKER_RECORD_TYPES } from '../actors/metrics/markers.ts';
import { partitionOf } from '../actors/partition-of.ts';
import { invariant } from '../persistence/invariant.ts';
import { describeError } from '../persistence/errors.ts';
import type { DurableStore, RecoveryHandler, RecoveryReport, SnapshotSource } from '../persistence/durable-store.ts';
import type { LogWriterObserver } from '../persistence/log-writer.ts';
import { ACCOUNTS_KEY, partitionKey, partitionKeys, subjectOf } from './nats-cluster.ts';
import { PartitionLog, type TakeUpHandler, type TakenUp } from './partition-log.ts';
import type { ApplyRecord } from './partition-reader.ts';
import { retryingWhileNatsRecovers } from './retry.ts';
import type { SnapshotObjects } from './snapshot-object.ts';
import { SubjectFollower } from './subject-follower.ts';
import { replaySubject } from './subject-replay.ts';

export interface ClusterStoreOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  /** Subjects are `<prefix>.p.<n>` and `<prefix>.accounts`; the stream holds `<prefix>.>`. */
  subjectPrefix: string;
  partitions: number;
  snapshots: SnapshotObjects;
  node: string;
  maxPayloadBytes: number;
  /** CLUSTER_LEASE_MS: purging lags snapshots by PURGE_LAG_LEASES of it (partition-log.ts). */
  leaseMs: number;
  log: (line: string) => void;
  /** Told of each group each partition publishes (metrics, ingest timings). */
  observer?: LogWriterObserver;
}

/** Recovery of several scoped snapshots needs two steps around the replay (actors/engine-snapshot.ts, reconcileWithAccounts). */
export interface ClusterRecoveryHandler extends RecoveryHandler {
  /** Every snapshot restored, before the replay: give an actor to every connection the accounts know. */
  snapshotsRestored(): void;
  /** The stream replayed to its end: drop the actors of connections the accounts no longer know. */
  replayed(): void;
}

/**
 * Connection records (alert and marker records included): written to their connection's
 * partition. An audit entry names a connection when the change it describes went to that
 * connection's partition, and goes with it; one without goes to the accounts partition.
 */
const CONNECTION_RECORD_TYPES = new Set(['ingest', 'job.action', 'commands.acked', 'control.requested', 'commands.expired', 'agent.capabilities', 'audit.recorded', ...ALERT_RECORD_TYPES, ...MARKER_RECORD_TYPES]);

export class ClusterStore implements DurableStore {
  private readonly logs = new Map<string, PartitionLog>();
  private readonly bySubject = new Map<string, PartitionLog>();
  private follower: SubjectFollower | undefined;
  private recoveredToSeq = 0;
  private recoveryStarted = false;

  constructor(private readonly options: ClusterStoreOptions) {
    for (const key of partitionKeys(options.partitions)) {
      const subject = subjectOf(key, options.subjectPrefix);
      const log = new PartitionLog({ ...options, key, subject });
      this.logs.set(key, log);
      this.bySubject.set(subject, log);
    }
  }

  /** Partition keys in order: p.0 .. p.N-1, accounts. */
  get keys(): string[] {
    return [...this.logs.keys()];
  }

  partition(key: string): PartitionLog {
    const log = this.logs.get(key);
    if (log === undefined) throw new Error(`no partition ${key} (of ${this.options.partitions})`);
    return log;
  }

  /** The partitions this node writes now. */
  writing(): string[] {
    return [...this.logs.values()].filter((log) => log.writing).map((log) => log.key);
  }

  /** Where `record` is written: its partition key. */
  keyOf(record: unknown): string {
    const { t, connectionId, partition } = record as { t?: string; connectionId?: unknown; partition?: unknown };
    if (t !== undefined && CONNECTION_RECORD_TYPES.has(t) && typeof connectionId === 'string') return this.keyOfConnection(connectionId);
    if (t === 'retention' && typeof partition === 'number') return partitionKey(partition);
    return ACCOUNTS_KEY;
  }

  /** The newest stream sequence this node applied or wrote: a forwarded write's answer names it (read-your-writes). */
  get lastSeq(): number {
    let seq = this.follower?.appliedSeq ?? this.recoveredToSeq;
    for (const log of this.logs.values()) if (log.writing) seq = Math.max(seq, log.lastSeq);
    return seq;
  }

  /** Log records this node's readers applied since it started (recovery, following, take-ups): what its replica cost. */
  get recordsApplied(): number {
    let records = 0;
    for (const log of this.logs.values()) records += log.reader.recordsApplied;
    return records;
  }

  /** what the partitions let go had taken in (applied or written here) when they were let go (see bytesApplied) */
  private bytesLetGo = 0;

  /**
   * Bytes of snapshots and records this node's readers applied since it started, plus what
   * the partitions it let go had taken in, applied or written here (src/service/memory-return.ts:
   * a burst's size; the state a let-go drops is garbage to give back like a burst's, so a node
   * that lost a partition to a move collects once it is quiet, also one it wrote until the
   * handover, whose records its reader never applied).
   */
  get bytesApplied(): number {
    let bytes = this.bytesLetGo;
    for (const log of this.logs.values()) bytes += log.reader.bytesApplied;
    return bytes;
  }

  /** Bytes since their snapshots over the partitions this node writes (a metric; each partition snapshots on its own). */
  get logBytesSinceSnapshot(): number {
    let bytes = 0;
    for (const log of this.logs.values()) if (log.writing) bytes += log.bytesSinceSnapshot;
    return bytes;
  }

  /** Restores the kept partitions' snapshots, then replays the stream in order to its end, applying what is kept (see above). */
  async recover(handler: RecoveryHandler): Promise<RecoveryReport> {
    invariant(!this.recoveryStarted, 'recover() is called once per store');
    this.recoveryStarted = true;
    const hooks = handler as Partial<ClusterRecoveryHandler>;
    const { js, jsm, stream, subjectPrefix, log } = this.options;
    const startedAtMs = performance.now();
    const lines: string[] = [];
    const say = (line: string): void => {
      lines.push(line);
      log(line);
    };
    let oldestCovered = Number.MAX_SAFE_INTEGER;
    let snapshotsLoaded = 0;
    const kept = [...this.logs.values()].filter((partition) => partition.keeping === 'kept');
    for (const partition of kept) {
      const snapshot = await partition.reader.loadSnapshot(handler, (line) => {
        if (!line.startsWith('no snapshot')) say(line); // 17 lines of nothing at a first start say little
      });
      if (snapshot !== undefined) snapshotsLoaded += 1;
      oldestCovered = Math.min(oldestCovered, partition.reader.appliedSeq);
    }
    say(`loaded ${snapshotsLoaded} of ${kept.length} partition snapshots; the oldest covers seq ${oldestCovered}`);
    hooks.snapshotsRestored?.();
    const endSeq = await retryingWhileNatsRecovers(`reading the last seq of ${stream}`, async () => (await jsm.streams.info(stream)).state.last_seq, say);
    let records = 0;
    const apply: ApplyRecord = (record, seq) => {
      records += 1;
      handler.record(record, seq);
    };
    // one pass over every subject in stream order; a retry after a NATS failure continues after the last message handed over
    let handedOver = oldestCovered;
    await retryingWhileNatsRecovers(
      `replaying ${stream} to seq ${endSeq}`,
      () =>
        replaySubject(js, stream, `${subjectPrefix}.>`, handedOver + 1, endSeq, (message) => {
          const partition = this.bySubject.get(message.subject);
          if (partition?.keeping === 'kept') partition.reader.apply(message, apply);
          handedOver = message.seq;
        }),
      say,
    );
    hooks.replayed?.();
    this.recoveredToSeq = Math.max(endSeq, oldestCovered === Number.MAX_SAFE_INTEGER ? 0 : oldestCovered);
    const durationMs = performance.now() - startedAtMs;
    const keptKeys = kept.map((partition) => partition.key);
    const notKept = this.logs.size - kept.length;
    say(
      `recovered ${kept.length} partitions (${keptKeys.join(', ')}) from ${snapshotsLoaded} snapshots and ${records} log records of ${stream} in ${Math.round(durationMs)} ms; last seq ${endSeq}` +
        (notKept === 0 ? '' : `; ${notKept} partitions are kept by other nodes`),
    );
    return { snapshotSeq: oldestCovered, recordsReplayed: records, truncatedBytes: 0, durationMs, lines };
  }

  /** After recover(): applies each new message of every subject this node does not write, in stream order. */
  follow(apply: ApplyRecord, onFatal: (error: Error) => void): SubjectFollower {
    invariant(this.recoveryStarted && !this.follower, 'follow() once, after recover()');
    const { js, jsm, stream, subjectPrefix, log } = this.options;
    this.follower = new SubjectFollower({
      js,
      stream,
      filter: `${subjectPrefix}.>`,
      readerFor: (subject) => this.bySubject.get(subject)?.followerApplier,
      fromSeq: this.recoveredToSeq,
      readLastSeq: async () => (await jsm.streams.info(stream)).state.last_seq,
      apply,
      log,
      onFatal,
    });
    const kept = this.keeping().length;
    log(`following ${subjectPrefix}.> after seq ${this.recoveredToSeq} (a hot replica of ${kept === this.logs.size ? 'every partition' : `${kept} of ${this.logs.size} partitions`})`);
    return this.follower;
  }

  /**
   * Which partitions this node keeps from the start (partition-keepers.ts), before recover():
   * the others are neither recovered nor followed until taken up. The accounts are always kept.
   */
  planKeeping(keeps: (key: string) => boolean): void {
    invariant(!this.recoveryStarted, 'planKeeping() before recover()');
    for (const partition of this.logs.values()) partition.keptAtStart = partition.key === ACCOUNTS_KEY || keeps(partition.key);
  }

  /** The partitions whose state this node keeps, applied and current (the accounts included). */
  keeping(): string[] {
    return [...this.logs.values()].filter((partition) => partition.keeping === 'kept').map((partition) => partition.key);
  }

  /** The partition key of `connectionId`'s records. */
  keyOfConnection(connectionId: string): string {
    return partitionKey(partitionOf(connectionId, this.options.partitions));
  }

  /** Whether the engine keeps `connectionId`'s state: its partition is kept here or being taken up (the engine's `holds`). */
  keepsConnection(connectionId: string): boolean {
    return this.partition(this.keyOfConnection(connectionId)).keeping !== 'not kept';
  }

  /** Starts keeping `key` while following (PartitionLog.takeUp): its snapshot and subject into `handler`. */
  takeUp(key: string, handler: TakeUpHandler): Promise<TakenUp> {
    const follower = this.follower;
    invariant(follower, 'takeUp() after follow()');
    return this.partition(key).takeUp(handler, follower);
  }

  /** Stops keeping `key` (not the accounts): the follower skips its subject; the caller drops its connections. */
  letGo(key: string): void {
    invariant(key !== ACCOUNTS_KEY, 'the accounts are kept by every node');
    const partition = this.partition(key);
    partition.letGo();
    this.bytesLetGo += partition.bytesTaken;
  }

  /** PartitionOwnership.onTaken: this node holds `key`'s lease; fence its subject and write it once the replica caught up. */
  takeOver(key: string, epoch: number): Promise<void> {
    const follower = this.follower;
    invariant(follower, 'takeOver() after follow()');
    return this.partition(key).takeOver(epoch, follower);
  }

  /** PartitionOwnership.release: stop writing `key` (appends refused at once, in-flight ones acknowledged), follow it again. */
  release(key: string): Promise<void> {
    return this.partition(key).release();
  }

  /** Throws synchronously (SERVICE_UNAVAILABLE) when this node does not write the record's partition. */
  append(record: unknown): Promise<number> {
    return this.partition(this.keyOf(record)).append(record);
  }

  /** A snapshot of the partition this node writes; `source` is the engine's takeSnapshot of its scope, in the same tick. */
  writePartitionSnapshot(key: string, source: SnapshotSource): Promise<{ seq: number; bytes: number; durationMs: number }> {
    return this.partition(key).writeSnapshot(source);
  }

  writeSnapshot(): Promise<{ seq: number; bytes: number; durationMs: number }> {
    return Promise.reject(new Error('in cluster mode each partition is snapshotted on its own (writePartitionSnapshot)'));
  }

  async close(): Promise<void> {
    await this.follower?.stop();
    for (const partition of this.logs.values()) {
      await partition.close().catch((error: unknown) => this.options.log(`closing ${partition.key} failed: ${describeError(error)}`));
    }
  }
}
