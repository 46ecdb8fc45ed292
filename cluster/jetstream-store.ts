/**
 * The DurableStore of cluster mode: the engine's log is one partition's subject of a
 * replicated JetStream stream and its snapshots are objects, so a record is durable
 * once a quorum of NATS servers stored it, and whichever node holds the partition's
 * lease can write it. Every node holds a hot replica (docs/cluster.md, stage 2b-i):
 *
 * - recover(): load the snapshot object (if any) and replay the subject to its end
 *   (partition-reader.ts). The node is now a replica: append refuses synchronously, before
 *   the engine evolves anything, with SERVICE_UNAVAILABLE ("this node does not own the log").
 * - follow(): keep applying the subject's new messages as they arrive (subject-follower.ts).
 * - takeOver(epoch), once this node holds the lease: stop following, append an owner
 *   marker fenced on the subject's last sequence, then apply everything up to the marker.
 *   The marker moves the subject past what any earlier owner expects, so a paused old
 *   owner that resumes is refused by JetStream on its next write instead of writing after
 *   us. If the marker is refused, an old owner appended meanwhile (a write it may have
 *   acknowledged): fence on its sequence and try again; the catch-up applies its writes.
 *   Then appends go to the fenced publisher.
 *
 * Sequences are stream sequences: append resolves with the sequence of the message that
 * carried the record, and a snapshot is named by the sequence it covers.
 *
 * Purging lags (the rule, also in docs/cluster.md): after a snapshot upload the owner
 * purges the subject below the covered sequence of the newest snapshot it knows that is
 * at least PURGE_LAG_LEASES x CLUSTER_LEASE_MS old (never the one just written). A replica
 * that keeps up is never more than a moment behind, so it never meets a purge; one that
 * was stopped longer than that may, and notices (partition-reader.ts).
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DomainError } from '../actors/domain-error.ts';
import { DurabilityError, describeError } from '../persistence/errors.ts';
import { invariant } from '../persistence/invariant.ts';
import { appendEncoded } from '../persistence/record-codec.ts';
import type { DurableStore, RecoveryHandler, RecoveryReport, SnapshotSource } from '../persistence/durable-store.ts';
import { FencedPublisher } from './fenced-publisher.ts';
import { PartitionReader, type ApplyRecord } from './partition-reader.ts';
import type { SnapshotObjects } from './snapshot-object.ts';
import { SubjectFollower } from './subject-follower.ts';
import { lastSubjectSeq } from './subject-replay.ts';

export interface JetStreamStoreOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  subject: string;
  /** Object name of the partition's snapshot. */
  snapshotName: string;
  snapshots: SnapshotObjects;
  node: string;
  maxPayloadBytes: number;
  /** CLUSTER_LEASE_MS: purging lags snapshots by PURGE_LAG_LEASES of it. */
  leaseMs: number;
  log: (line: string) => void;
}

/**
 * An old owner still writing (a paused owner that resumed) halts within a lease: it is
 * fenced by its first write after the marker, or loses the lease. Each attempt costs one
 * publish, so this many outlast it.
 */
const MARKER_ATTEMPTS_MAX = 100;
/** A snapshot is purged below only once it is this many leases old (on this node's clock, counted from when it learned of it). */
export const PURGE_LAG_LEASES = 2;

interface KnownSnapshot {
  coveredSeq: number;
  knownSinceMs: number;
}

export class JetStreamStore implements DurableStore {
  private readonly reader: PartitionReader;
  private publisher: FencedPublisher | undefined;
  private follower: SubjectFollower | undefined;
  private recoveryStarted = false;
  private snapshotInProgress: Promise<unknown> | undefined;
  private publishedBytesAtSnapshot = 0;
  /** Snapshots this owner may purge below once they are old enough, oldest first. */
  private snapshotsKnown: KnownSnapshot[] = [];
  private purgedBelow = 0;

  constructor(private readonly options: JetStreamStoreOptions) {
    this.reader = new PartitionReader(options);
  }

  get lastSeq(): number {
    return this.publisher?.lastSeq ?? this.follower?.appliedSeq ?? this.reader.appliedSeq;
  }

  get owns(): boolean {
    return this.publisher !== undefined;
  }

  get logBytesSinceSnapshot(): number {
    if (!this.publisher) return 0;
    return this.reader.bytesSinceSnapshot + this.publisher.publishedBytes - this.publishedBytesAtSnapshot;
  }

  /** Loads the snapshot and replays the subject to its end; the node is a replica afterwards (see follow and takeOver). */
  async recover(handler: RecoveryHandler): Promise<RecoveryReport> {
    invariant(!this.recoveryStarted, 'recover() is called once per store');
    this.recoveryStarted = true;
    const { subject, snapshotName } = this.options;
    const startedAtMs = performance.now();
    const lines: string[] = [];
    const say = this.sayInto(lines);
    const snapshot = await this.reader.loadSnapshot(handler, say);
    const snapshotSeq = snapshot?.coveredSeq ?? 0;
    await this.reader.replayTo(await this.reader.readLastSeq(say), (record, seq) => handler.record(record, seq), say);
    const durationMs = performance.now() - startedAtMs;
    const { recordsApplied, markersSkipped } = this.reader;
    say(
      `recovered from ${snapshot ? `snapshot ${snapshotName}` : 'no snapshot'} (seq ${snapshotSeq}) and ${recordsApplied} log records ` +
        `of ${subject} (${markersSkipped} owner markers skipped) in ${Math.round(durationMs)} ms; last seq ${this.reader.appliedSeq}`,
    );
    return { snapshotSeq, recordsReplayed: recordsApplied, truncatedBytes: 0, durationMs, lines };
  }

  /** After recover(): applies each new message of the subject with `apply` until takeOver() or close(). */
  follow(apply: ApplyRecord, onFatal: (error: Error) => void): SubjectFollower {
    invariant(this.recoveryStarted && !this.follower && !this.publisher, 'follow() once, after recover()');
    const { js, stream, subject, log } = this.options;
    this.follower = new SubjectFollower({
      js,
      stream,
      filter: subject,
      readerFor: (of) => (of === subject ? this.reader : undefined),
      fromSeq: this.reader.appliedSeq,
      readLastSeq: () => lastSubjectSeq(this.options.jsm, stream, subject),
      apply,
      log,
      onFatal,
    });
    log(`following ${subject} after seq ${this.reader.appliedSeq} (a hot replica; requests that write go to the owner)`);
    return this.follower;
  }

  /**
   * This node holds the lease (epoch `epoch`): stop following, fence the subject with the
   * owner marker, apply what is left of it up to the marker, and write from now on. The
   * engine is the one that followed; nothing is rebuilt.
   */
  async takeOver(epoch: number, apply: ApplyRecord): Promise<void> {
    invariant(this.recoveryStarted && !this.publisher, 'takeOver() once, after recover()');
    const { subject, snapshotName, snapshots, node, log } = this.options;
    const startedAtMs = performance.now();
    const say = this.sayInto([]);
    await this.follower?.stop();
    const fromSeq = this.reader.appliedSeq;
    const recordsBefore = this.reader.recordsApplied;
    // Fence first, then catch up: one read and one publish per attempt, so an old owner
    // still writing (it stops within a lease) cannot outrun the marker for long.
    let lastSeq = await this.reader.readLastSeq(say);
    const publisher = new FencedPublisher({ ...this.options, epoch, lastSeq });
    let markerSeq = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        markerSeq = await publisher.publishOwnerMarker(lastSeq);
        say(`owner marker at seq ${markerSeq} (node ${node}, epoch ${epoch})`);
        // A message admitted beside the marker on the same fence (partition-reader.ts) would
        // leave the subject past it, and this node's first write refused: fence again on it.
        const after = await this.reader.readLastSeq(say);
        if (after === markerSeq) break;
        if (attempt >= MARKER_ATTEMPTS_MAX) throw new DurabilityError(`${subject} kept growing past the owner marker (seq ${markerSeq}, now ${after})`);
        say(`${subject} holds seq ${after} past the owner marker at seq ${markerSeq} (admitted beside it): fencing again`);
        lastSeq = after;
      } catch (error) {
        const reason = describeError(error);
        if (!/^fenced/.test(reason) || attempt >= MARKER_ATTEMPTS_MAX) throw error;
        const named = Number(/wrong last sequence: (\d+)/i.exec(reason)?.[1]);
        lastSeq = Number.isSafeInteger(named) && named > lastSeq ? named : await this.reader.readLastSeq(say);
        if (attempt === 1) say(`${subject} grew to seq ${lastSeq} before the owner marker (the previous owner's last writes): fencing on it`);
      }
    }
    // nothing but this node can append now: apply what the previous owner wrote, up to the marker
    await this.reader.replayTo(markerSeq, apply, say);
    // the newest snapshot, known from now on: purging below it waits PURGE_LAG_LEASES leases from here
    const newest = await snapshots.coveredSeqOf(snapshotName).catch(() => undefined);
    if (newest !== undefined) this.snapshotsKnown = [{ coveredSeq: newest, knownSinceMs: performance.now() }];
    this.publisher = publisher;
    log(
      `caught up ${this.reader.recordsApplied - recordsBefore} log records of ${subject} (seq ${fromSeq} to ${lastSeq}) in ` +
        `${Math.round(performance.now() - startedAtMs)} ms and took over as the writer (epoch ${epoch}); last seq ${this.lastSeq}`,
    );
  }

  /** Throws (synchronously, so the engine evolves nothing) on a node that does not own the log. */
  append(record: unknown): Promise<number> {
    const publisher = this.publisher;
    if (!publisher) throw new DomainError('SERVICE_UNAVAILABLE', 'this node does not own the log (a replica); retry shortly');
    return appendEncoded(record, (payload) => publisher.append(payload));
  }

  async writeSnapshot(source: SnapshotSource): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const publisher = this.publisher;
    invariant(publisher, 'writeSnapshot() before recover() finished');
    if (this.snapshotInProgress) throw new Error('a snapshot is already being written');
    // Same tick as the engine's takeSnapshot: the records appended so far, and no later one.
    const covered = publisher.sealed();
    const publishedBytesBefore = publisher.publishedBytes + this.pendingBytes();
    const written = this.writeSnapshotOnce(covered, publishedBytesBefore, source);
    this.snapshotInProgress = written.catch(() => undefined);
    try {
      return await written;
    } finally {
      this.snapshotInProgress = undefined;
    }
  }

  async close(): Promise<void> {
    await this.follower?.stop();
    await this.snapshotInProgress;
    await this.publisher?.flush();
  }

  /** Bytes queued but not yet acknowledged: the snapshot covers them too once the sealed group is acked. */
  private pendingBytes(): number {
    return this.publisher?.queuedBytes ?? 0;
  }

  private async writeSnapshotOnce(
    covered: Promise<number>,
    publishedBytesBefore: number,
    source: SnapshotSource,
  ): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const { subject, snapshotName, snapshots, log } = this.options;
    const startedAtMs = performance.now();
    let seq = 0;
    try {
      seq = await covered;
      const bytes = await snapshots.upload(snapshotName, seq, source);
      this.reader.bytesSinceSnapshot = 0;
      this.publishedBytesAtSnapshot = publishedBytesBefore;
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

  private sayInto(lines: string[]): (line: string) => void {
    return (line) => {
      lines.push(line);
      this.options.log(line);
    };
  }
}
