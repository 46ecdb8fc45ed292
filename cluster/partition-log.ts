/**
 * One partition's side of the cluster log (a subject of the one stream): followed by this
 * node's replica, or written by it. The cluster store (cluster-store.ts) holds one per
 * partition key and routes to it.
 *
 * Phases: `following` (the replica's follower applies the subject's messages through this
 * partition's reader), `taking over` (the lease is won: the follower still applies, up to
 * the owner marker), `writing` (the follower skips the subject: this node's publisher is
 * its only writer), `releasing` (handing over: appends are refused, the publisher is
 * flushed, then the subject is followed again after its last sequence).
 *
 * Beside its phase, whether this node keeps the partition at all (`Keeping`: kept, taking
 * up, not kept; partition-keeping.ts decides): a partition not kept is skipped by the
 * follower, and one being taken up has the follower's messages held back until its snapshot
 * and subject are loaded (takeUp). Only a kept partition can be taken over.
 *
 * Taking over fences first and then catches up (docs/cluster.md, "Replicas"): the owner
 * marker is appended fenced on the subject's last sequence (refused: an old owner wrote
 * meanwhile; fence on the sequence the refusal names), and the follower, which applies
 * every subject in stream order (causal order: a connection's `connection.created` on the
 * accounts subject precedes its records), is waited for up to the marker. A message
 * admitted beside the marker on the same fence (nats-server 2.9, issue 4320) leaves the
 * subject past it: fence again on it.
 *
 * Purging lags (the rule, also in docs/cluster.md): after a snapshot upload the writer
 * purges the subject below the covered sequence of the newest snapshot it knows that is
 * at least PURGE_LAG_LEASES x CLUSTER_LEASE_MS old (never the one just written).
 */
import { DomainError } from '../actors/domain-error.ts';
import { DurabilityError, describeError } from '../persistence/errors.ts';
import { appendEncoded } from '../persistence/record-codec.ts';
import type { RecoveryHandler, SnapshotSource } from '../persistence/durable-store.ts';
import type { ClusterStoreOptions } from './cluster-store.ts';
import { FencedError, FencedPublisher } from './fenced-publisher.ts';
import { PartitionReader, type ApplyRecord } from './partition-reader.ts';
import { lastSubjectMessage, type SubjectMessage } from './subject-replay.ts';

/** The store's settings for one partition (see ClusterStoreOptions), plus which partition it is. */
export interface PartitionLogOptions
  extends Pick<ClusterStoreOptions, 'js' | 'jsm' | 'stream' | 'snapshots' | 'node' | 'maxPayloadBytes' | 'leaseMs' | 'log' | 'observer'> {
  /** The lease key and snapshot object name: `p.<n>` or `accounts`. */
  key: string;
  subject: string;
}

/**
 * An old owner still writing (a paused owner that resumed) halts within a lease: it is
 * fenced by its first write after the marker, or loses the lease. Each attempt costs one
 * publish, so this many outlast it.
 */
const MARKER_ATTEMPTS_MAX = 100;
/** A snapshot is purged below only once it is this many leases old (on this node's clock, counted from when it learned of it). */
export const PURGE_LAG_LEASES = 2;
/** How long a takeover waits for the replica to apply the log up to its owner marker. */
const CATCH_UP_TIMEOUT_MS = 30_000;

export type PartitionPhase = 'following' | 'taking over' | 'writing' | 'releasing';

/**
 * Whether this node keeps the partition's state (partition-keepers.ts): `kept` (applied
 * and current), `taking up` (its snapshot and subject are being loaded; the follower's
 * messages for it are held back meanwhile), or `not kept` (the follower skips its subject).
 */
export type Keeping = 'kept' | 'taking up' | 'not kept';

/** What a take-up hands the engine: the partition's snapshot, then its records; `snapshotRestored` between them. */
export interface TakeUpHandler extends Pick<RecoveryHandler, 'snapshotChunk' | 'snapshotEnded'> {
  /** The snapshot is in: give an actor to each of the partition's connections the accounts know and the snapshot has not. */
  snapshotRestored(): void;
  record: ApplyRecord;
}

/** What a take-up did, for its log line and the failover figures. */
export interface TakenUp {
  snapshotSeq: number;
  records: number;
  heldBack: number;
  durationMs: number;
}

/** Something that applies a subject's messages as the follower hands them over. */
export interface SubjectApplier {
  apply(message: SubjectMessage, apply: ApplyRecord): void;
}

/** What a takeover needs of the replica's follower. */
export interface AppliedPosition {
  waitApplied(seq: number, timeoutMs: number): Promise<boolean>;
}

/** What a take-up needs of the follower: its position, and a wait for a later one. */
export interface FollowerPosition extends AppliedPosition {
  readonly appliedSeq: number;
}

interface KnownSnapshot {
  coveredSeq: number;
  knownSinceMs: number;
}

export class PartitionLog {
  readonly reader: PartitionReader;
  private phaseNow: PartitionPhase = 'following';
  private keepingNow: Keeping = 'kept';
  /** The follower's messages for this subject while it is taken up, applied once the replay met them. */
  private heldBack: SubjectMessage[] = [];
  private readonly holdingBack: SubjectApplier = { apply: (message) => void this.heldBack.push(message) };
  private publisher: FencedPublisher | undefined;
  private snapshotInProgress: Promise<unknown> | undefined;
  private publishedBytesAtSnapshot = 0;
  /** Payload bytes this node published to the subject in its earlier terms as its writer (the current term's are its publisher's). */
  private publishedBytesBefore = 0;
  /** Snapshots this writer may purge below once they are old enough, oldest first. */
  private snapshotsKnown: KnownSnapshot[] = [];
  private purgedBelow = 0;
  /** performance.now() of the last snapshot this node loaded or wrote for the partition (or of the takeover). */
  lastSnapshotAtMs = performance.now();

  constructor(readonly options: PartitionLogOptions) {
    this.reader = new PartitionReader({ ...options, snapshotName: options.key });
  }

  get phase(): PartitionPhase {
    return this.phaseNow;
  }

  get key(): string {
    return this.options.key;
  }

  /** The replica applies this subject's messages while this node does not write it. */
  get followed(): boolean {
    return this.phaseNow === 'following' || this.phaseNow === 'taking over';
  }

  get writing(): boolean {
    return this.phaseNow === 'writing';
  }

  get keeping(): Keeping {
    return this.keepingNow;
  }

  /** Recovery's plan, before anything is applied: a partition not kept is neither recovered nor followed. */
  set keptAtStart(kept: boolean) {
    this.keepingNow = kept ? 'kept' : 'not kept';
  }

  /** Who applies the follower's messages of this subject now: its reader, the held-back list during a take-up, or nobody. */
  get followerApplier(): SubjectApplier | undefined {
    if (!this.followed || this.keepingNow === 'not kept') return undefined;
    return this.keepingNow === 'kept' ? this.reader : this.holdingBack;
  }

  /**
   * Starts keeping the partition while the follower runs, so that every record meets the
   * accounts as they were when it was written or newer (its connection created, not deleted
   * yet or deleted for good): from this call on, the follower's messages of the subject are
   * held back; the snapshot object is downloaded and restored once the follower has reached
   * the sequence it covers, then reconciled with the accounts; the subject is replayed from
   * it up to what the follower had passed over at this call; then the held-back messages are
   * applied in order (those the snapshot covers skipped by sequence; the reader refuses a
   * gap). Every step from the last await to `kept` is synchronous, so no message of the
   * follower is applied twice or missed. On a failure the partition is `not kept` again (the
   * caller drops what was loaded).
   */
  async takeUp(handler: TakeUpHandler, replica: FollowerPosition): Promise<TakenUp> {
    if (this.keepingNow !== 'not kept') throw new Error(`takeUp(${this.options.key}) while ${this.keepingNow}`);
    const startedAtMs = performance.now();
    this.keepingNow = 'taking up';
    this.heldBack = [];
    // every message of the subject after this sequence reaches the follower from now on, so it is held back
    const passedOver = replica.appliedSeq;
    const say = (line: string): void => {
      if (!line.startsWith('no snapshot')) this.options.log(line);
    };
    try {
      const recordsBefore = this.reader.recordsApplied;
      const snapshot = await this.reader.loadSnapshot(handler, say, async (coveredSeq) => {
        // The accounts must be as new as the snapshot before it is reconciled with them: a
        // connection the snapshot holds and the follower has not seen created yet would be dropped.
        if (!(await replica.waitApplied(coveredSeq, CATCH_UP_TIMEOUT_MS))) {
          throw new DurabilityError(`the replica did not reach seq ${coveredSeq} (snapshot ${this.options.key}) within ${CATCH_UP_TIMEOUT_MS} ms`);
        }
      });
      handler.snapshotRestored();
      // Only what the follower had passed over: a later record could meet accounts older than itself (its connection not created yet).
      await this.reader.replayUpTo(passedOver, handler.record, say);
      const heldBack = this.heldBack;
      for (const message of heldBack) this.reader.apply(message, handler.record);
      this.heldBack = [];
      this.keepingNow = 'kept';
      this.lastSnapshotAtMs = performance.now();
      return { snapshotSeq: snapshot?.coveredSeq ?? 0, records: this.reader.recordsApplied - recordsBefore, heldBack: heldBack.length, durationMs: performance.now() - startedAtMs };
    } catch (error) {
      this.heldBack = [];
      this.keepingNow = 'not kept';
      throw error;
    }
  }

  /** Stops keeping the partition: the follower skips its subject from now on. Only while it is neither written nor moving here. */
  letGo(): void {
    if (this.phaseNow !== 'following') throw new Error(`letGo(${this.options.key}) while ${this.phaseNow}`);
    if (this.keepingNow !== 'kept') throw new Error(`letGo(${this.options.key}) while ${this.keepingNow}`);
    this.keepingNow = 'not kept';
  }

  /** The last sequence of the subject this node knows: written by it, or applied by its replica. */
  get lastSeq(): number {
    return this.publisher?.lastSeq ?? this.reader.appliedSeq;
  }

  /**
   * Payload bytes of the partition this node took in since it started, applied (snapshots,
   * records) and published as its writer: what its state grew from, so what a let-go leaves
   * as garbage (src/service/memory-return.ts).
   */
  get bytesTaken(): number {
    return this.reader.bytesApplied + this.publishedBytesBefore + (this.publisher?.publishedBytes ?? 0);
  }

  /** Payload bytes of the subject since the snapshot this node last loaded or wrote (applied and published). */
  get bytesSinceSnapshot(): number {
    return this.reader.bytesSinceSnapshot + (this.publisher ? this.publisher.publishedBytes - this.publishedBytesAtSnapshot : 0);
  }

  /**
   * This node holds the lease (epoch `epoch`). The follower keeps applying the subject
   * while the marker goes in; once it has applied up to the marker, this node writes.
   */
  async takeOver(epoch: number, replica: AppliedPosition): Promise<void> {
    if (this.phaseNow !== 'following') throw new Error(`takeOver(${this.options.key}) while ${this.phaseNow}`);
    // the catch-up below is the replica's: a partition not kept here is taken up first (partition-keeping.ts)
    if (this.keepingNow !== 'kept') throw new Error(`takeOver(${this.options.key}) while ${this.keepingNow}`);
    this.phaseNow = 'taking over';
    try {
      await this.fenceAndCatchUp(epoch, replica);
    } catch (error) {
      this.phaseNow = 'following';
      this.publishedBytesBefore += this.publisher?.publishedBytes ?? 0;
      this.publisher = undefined;
      throw error;
    }
  }

  private async fenceAndCatchUp(epoch: number, replica: AppliedPosition): Promise<void> {
    const { subject, key, snapshots, log, jsm, stream } = this.options;
    const startedAtMs = performance.now();
    const fromSeq = this.reader.appliedSeq;
    const recordsBefore = this.reader.recordsApplied;
    let lastSeq = await this.reader.readLastSeq(log);
    const publisher = new FencedPublisher({ ...this.options, epoch, lastSeq, lastMessage: () => lastSubjectMessage(jsm, stream, subject) });
    let markerSeq = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        markerSeq = await publisher.publishOwnerMarker(lastSeq);
        // A message admitted beside the marker on the same fence would leave the subject past it, and this node's first write refused: fence again on it.
        const after = await this.reader.readLastSeq(log);
        if (after === markerSeq) break;
        if (attempt >= MARKER_ATTEMPTS_MAX) throw new DurabilityError(`${subject} kept growing past the owner marker (seq ${markerSeq}, now ${after})`);
        log(`${subject} holds seq ${after} past the owner marker at seq ${markerSeq} (admitted beside it): fencing again`);
        lastSeq = after;
      } catch (error) {
        if (!(error instanceof FencedError) || attempt >= MARKER_ATTEMPTS_MAX) throw error;
        const named = error.lastSeqNamed;
        lastSeq = named !== null && named > lastSeq ? named : await this.reader.readLastSeq(log);
        if (attempt === 1) log(`${subject} grew to seq ${lastSeq} before the owner marker (the previous owner's last writes): fencing on it`);
      }
    }
    // nothing but this node can append now: the replica applies what the previous owner wrote, up to the marker, in stream order
    if (!(await replica.waitApplied(markerSeq, CATCH_UP_TIMEOUT_MS)) || this.reader.appliedSeq < markerSeq) {
      throw new DurabilityError(`the replica did not apply ${subject} up to the owner marker at seq ${markerSeq} within ${CATCH_UP_TIMEOUT_MS} ms (applied: ${this.reader.appliedSeq})`);
    }
    // the newest snapshot, known from now on: purging below it waits PURGE_LAG_LEASES leases from here
    const newest = await snapshots.coveredSeqOf(key).catch(() => undefined);
    this.snapshotsKnown = newest === undefined ? [] : [{ coveredSeq: newest, knownSinceMs: performance.now() }];
    this.publishedBytesAtSnapshot = 0;
    this.publisher = publisher;
    this.phaseNow = 'writing';
    log(
      `caught up ${this.reader.recordsApplied - recordsBefore} log records of ${subject} (seq ${fromSeq} to ${markerSeq}) in ` +
        `${Math.round(performance.now() - startedAtMs)} ms and took over as its writer (epoch ${epoch})`,
    );
  }

  /**
   * Handing over: refuse new appends at once, wait for what is in flight (and a snapshot
   * being written), then follow the subject again after the last message this node wrote.
   */
  async release(): Promise<void> {
    if (this.phaseNow !== 'writing') return;
    this.phaseNow = 'releasing';
    const publisher = this.publisher!;
    try {
      await this.snapshotInProgress;
      await publisher.flush();
    } finally {
      this.reader.appliedSeq = Math.max(this.reader.appliedSeq, publisher.lastSeq);
      this.publishedBytesBefore += publisher.publishedBytes;
      this.publisher = undefined;
      this.phaseNow = 'following';
    }
  }

  /** Throws (synchronously, so the engine evolves nothing) unless this node writes the partition. */
  append(record: unknown): Promise<number> {
    const publisher = this.publisher;
    if (publisher === undefined || this.phaseNow !== 'writing') {
      throw new DomainError('SERVICE_UNAVAILABLE', `this node does not write partition ${this.options.key} of the log (another node does, or it is moving); retry shortly`);
    }
    return appendEncoded(record, (payload) => publisher.append(payload));
  }

  /** Must be called in the same tick as the engine's takeSnapshot of this partition's scope. */
  async writeSnapshot(source: SnapshotSource): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const publisher = this.publisher;
    if (publisher === undefined || this.phaseNow !== 'writing') throw new Error(`snapshot of ${this.options.key} on a node that does not write it`);
    if (this.snapshotInProgress) throw new Error(`a snapshot of ${this.options.key} is already being written`);
    // Same tick as the engine's takeSnapshot: the records appended so far, and no later one.
    const covered = publisher.sealed();
    const publishedBytesBefore = publisher.publishedBytes + publisher.queuedBytes;
    const written = this.writeSnapshotOnce(covered, publishedBytesBefore, source);
    this.snapshotInProgress = written.catch(() => undefined);
    try {
      return await written;
    } finally {
      this.snapshotInProgress = undefined;
    }
  }

  async close(): Promise<void> {
    await this.snapshotInProgress;
    await this.publisher?.flush();
  }

  private async writeSnapshotOnce(
    covered: Promise<number>,
    publishedBytesBefore: number,
    source: SnapshotSource,
  ): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const { subject, key, snapshots, log } = this.options;
    const startedAtMs = performance.now();
    let seq = 0;
    try {
      seq = await covered;
      const bytes = await snapshots.upload(key, seq, source);
      this.reader.bytesSinceSnapshot = 0;
      this.publishedBytesAtSnapshot = publishedBytesBefore;
      this.lastSnapshotAtMs = performance.now();
      this.snapshotsKnown.push({ coveredSeq: seq, knownSinceMs: performance.now() });
      await this.purgeBelowAgedSnapshot();
      return { seq, bytes, durationMs: performance.now() - startedAtMs };
    } catch (error) {
      source.chunks.return?.();
      log(`snapshot of ${subject} at seq ${seq} failed: ${describeError(error)}`);
      throw error instanceof DurabilityError ? error : new DurabilityError(describeError(error), { cause: error });
    }
  }

  /**
   * Only after an upload completed, and only below a snapshot at least PURGE_LAG_LEASES
   * leases old, so replicas that keep up never meet the purge. The covered message itself
   * stays: the subject must never become empty, or its last sequence would read as 0 and
   * fencing would compare against the wrong value. A failure loses nothing: the next
   * snapshot purges more.
   */
  private async purgeBelowAgedSnapshot(): Promise<void> {
    const { jsm, stream, subject, leaseMs, log } = this.options;
    const agedBeforeMs = performance.now() - PURGE_LAG_LEASES * leaseMs;
    const aged = this.snapshotsKnown.filter((snapshot) => snapshot.knownSinceMs <= agedBeforeMs).at(-1);
    if (aged === undefined) return;
    // older ones are covered by `aged`; keep it and the younger ones for the next snapshots
    this.snapshotsKnown = this.snapshotsKnown.filter((snapshot) => snapshot.knownSinceMs >= aged.knownSinceMs);
    const seq = aged.coveredSeq;
    if (seq <= this.purgedBelow) return;
    try {
      const purged = await jsm.streams.purge(stream, { filter: subject, seq });
      this.purgedBelow = seq;
      if (purged.purged > 0) log(`purged ${purged.purged} messages of ${subject} below seq ${seq} (covered by a snapshot at least ${PURGE_LAG_LEASES} leases old)`);
    } catch (error) {
      log(`purging ${subject} below seq ${seq} failed (${describeError(error)}); the next snapshot retries`);
    }
  }
}
