/**
 * Ownership of a partition: a key in the jobwatch_leases bucket holding `{ node, epoch, url }`
 * (`url`: where the owner's HTTP is reached, so other nodes can forward to it).
 *
 * - Acquire with kv.create (only if the key is absent) or kv.update on the revision seen
 *   (a released lease, or one whose revision this node has watched stay the same for
 *   LEASE_MS on its own clock: no clock agreement between machines is needed).
 * - Renew every LEASE_MS / 4 with kv.update on the revision this node last wrote. A
 *   refused renewal means another node took the lease: `onLost` runs once and the node
 *   must stop writing. A renewal that cannot get through (NATS unreachable, a raft
 *   election of the bucket) is retried and is not a loss by itself: nobody can take the
 *   lease without writing the same bucket, and a node that did take it fences the log
 *   before writing, so this node's next append is refused. Giving the lease up on a timer
 *   instead halted every node, the only one included, whenever an election outlasted a
 *   lease (nats-server 2.9 elections take about 7 s, longer on a busy machine).
 * - The key is never deleted, so the epoch only grows: a release writes `released`, and
 *   the next owner's epoch is one higher. Message ids carry the epoch, so two owners
 *   never publish the same id inside JetStream's duplicate window.
 *
 * The lease only keeps two nodes from both trying; a paused owner that resumes is
 * stopped by the log itself (expect.lastSubjectSequence, see fenced-publisher.ts).
 */
import type { KV, KvEntry } from '@nats-io/kv';
import { describeError } from '../persistence/errors.ts';
import { isWrongLastSequence } from './nats-errors.ts';

export interface LeaseValue {
  node: string;
  epoch: number;
  /** The holder's CLUSTER_ADVERTISE_URL ('' in a value written before leases carried it). */
  url: string;
  released?: boolean;
}

/** Who serves the partition now, as a waiting node last read it; null: nobody (released, or never taken). */
export type LeaseHolder = { node: string; url: string } | null;

export interface LeaseOptions {
  kv: KV;
  key: string;
  node: string;
  /** This node's advertised URL, written into the lease value. */
  url: string;
  leaseMs: number;
  log: (line: string) => void;
  onLost: (error: Error) => void;
  /** While waiting: told the holder on every poll (a lapsed holder is still named; forwards to it fail until one takes over). */
  onHolder?: (holder: LeaseHolder) => void;
  /** Stops waiting (the node shuts down as a standby): acquire() rejects with its reason. */
  signal?: AbortSignal;
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

/**
 * What the caller of `tryAcquire` last saw of the key (from a watch): its entry, or null if
 * absent, and for how long its revision has stayed the same on this node's clock.
 */
export interface ObservedLease {
  entry: KvEntry | null;
  unchangedForMs: number;
}

export class PartitionLease {
  private revision: number;
  private lastRenewedMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private renewing = false;
  private lost = false;
  private complainedAtRevision = -1;
  private complainedLongAtRevision = -1;

  /** `selfRenewing`: a timer of its own renews it; otherwise the caller calls `renew()` every LEASE_MS / 4. */
  private constructor(
    private readonly options: LeaseOptions,
    readonly epoch: number,
    revision: number,
    selfRenewing: boolean,
  ) {
    this.revision = revision;
    this.lastRenewedMs = performance.now();
    if (selfRenewing) this.timer = setInterval(() => void this.renew(), renewalIntervalMs(options.leaseMs));
  }

  /** Waits (logging whom for) until this node holds the lease; it then renews itself. */
  static async acquire(options: LeaseOptions): Promise<PartitionLease> {
    const { kv, key, leaseMs, log } = options;
    const pollMs = Math.max(50, Math.min(500, Math.floor(leaseMs / 10)));
    let watched: { revision: number; sinceMs: number } | undefined;
    let announcedHolder = '';
    for (;;) {
      options.signal?.throwIfAborted();
      const created = await take(options, null);
      if (created !== null) return new PartitionLease(options, created.epoch, created.revision, true);
      const entry = await kv.get(key).catch(() => null);
      if (entry !== null && entry.operation === 'PUT') {
        const held = decode(entry);
        options.onHolder?.(held.released ? null : { node: held.node, url: held.url });
        const nowMs = performance.now();
        if (watched?.revision !== entry.revision) watched = { revision: entry.revision, sinceMs: nowMs };
        if (held.released || nowMs - watched.sinceMs >= leaseMs) {
          const taken = await take(options, entry);
          if (taken !== null) return new PartitionLease(options, taken.epoch, taken.revision, true);
        } else if (announcedHolder !== held.node) {
          announcedHolder = held.node;
          log(`waiting for the lease held by ${held.node} (${key}, epoch ${held.epoch}); taking over if it is not renewed for ${leaseMs} ms`);
        }
      }
      await Bun.sleep(pollMs);
    }
  }

  /**
   * One attempt, without waiting: takes the lease if it is absent (or deleted), released, or
   * lapsed as `observed` says; null if it is held, or if another node was faster (the write
   * on the observed revision is refused). The caller renews it with `renew()`.
   */
  static async tryAcquire(options: LeaseOptions, observed: ObservedLease): Promise<PartitionLease | null> {
    const { entry } = observed;
    if (entry === null || entry.operation !== 'PUT') {
      const created = await take(options, null);
      return created === null ? null : new PartitionLease(options, created.epoch, created.revision, false);
    }
    if (!(decode(entry).released || observed.unchangedForMs >= options.leaseMs)) return null;
    const taken = await take(options, entry);
    return taken === null ? null : new PartitionLease(options, taken.epoch, taken.revision, false);
  }

  /** Stops renewing and marks the lease released, so a standby takes it at once instead of after a lapse. */
  async release(): Promise<void> {
    clearInterval(this.timer);
    if (this.lost) return;
    this.lost = true;
    const { kv, key, node, url, log } = this.options;
    try {
      await kv.update(key, encode({ node, epoch: this.epoch, url, released: true }), this.revision);
      log(`released the lease ${key} (epoch ${this.epoch})`);
    } catch (error) {
      // refused: another node took it meanwhile (this one was paused, or cut off, past the lease); nothing was written after
      if (isRefusal(error)) log(`lost the lease ${key} (epoch ${this.epoch}): another node took it before this node could release it`);
      else log(`could not release the lease ${key} (${describeError(error)}); a standby takes it after it lapses`);
    }
  }

  /** Called by the lease's own timer, or by the caller of `tryAcquire`; a renewal still in flight makes it a no-op. */
  async renew(): Promise<void> {
    if (this.renewing || this.lost) return;
    this.renewing = true;
    const { kv, key, node, url, leaseMs, log } = this.options;
    try {
      this.revision = await kv.update(key, encode({ node, epoch: this.epoch, url }), this.revision);
      this.lastRenewedMs = performance.now();
    } catch (error) {
      if (this.lost) return;
      if (isRefusal(error)) {
        if (!(await this.stillOurs())) this.loseWith(`another node took it (${describeError(error)})`);
      } else if (performance.now() - this.lastRenewedMs >= leaseMs && this.complainedLongAtRevision !== this.revision) {
        this.complainedLongAtRevision = this.revision;
        log(
          `the lease ${key} was not renewed for ${leaseMs} ms (${describeError(error)}); still writing until a renewal is refused ` +
            `(another node that took it fences the log first, so this node's next write would be refused)`,
        );
      } else if (this.complainedAtRevision !== this.revision) {
        this.complainedAtRevision = this.revision;
        log(`renewing the lease ${key} failed (${describeError(error)}); retrying`);
      }
    } finally {
      this.renewing = false;
    }
  }

  /**
   * A renewal whose answer was lost (a NATS server died after storing it) leaves this node
   * with a stale revision, and the retry is refused although the lease is still ours: if
   * the key holds our own node and epoch, adopt its revision instead of giving up.
   */
  private async stillOurs(): Promise<boolean> {
    try {
      const entry = await this.options.kv.get(this.options.key);
      if (entry === null || entry.operation !== 'PUT') return false;
      const held = decode(entry);
      // Only a newer revision can be a write of ours we never heard back about (a replica may answer stale).
      if (entry.revision <= this.revision || held.node !== this.options.node || held.epoch !== this.epoch || held.released) return false;
      this.revision = entry.revision;
      this.lastRenewedMs = performance.now();
      return true;
    } catch {
      return false; // unreadable: not provably ours
    }
  }

  private loseWith(reason: string): void {
    this.lost = true;
    clearInterval(this.timer);
    const message = `lost the lease ${this.options.key} (epoch ${this.epoch}): ${reason}`;
    this.options.log(message);
    this.options.onLost(new LeaseLostError(message));
  }
}

export function renewalIntervalMs(leaseMs: number): number {
  return Math.max(50, Math.floor(leaseMs / 4));
}

/**
 * Writes this node into the lease: `kv.create` when `current` is null (absent), else
 * `kv.update` on `current`'s revision with the next epoch (the caller has judged it
 * released or lapsed). Null when refused (another node wrote first) or NATS failed.
 */
async function take(options: LeaseOptions, current: KvEntry | null): Promise<{ epoch: number; revision: number } | null> {
  const { kv, key, node, url, leaseMs, log } = options;
  try {
    if (current === null) {
      const revision = await kv.create(key, encode({ node, epoch: 1, url }));
      if (!(await stillLatest(options, revision))) return null;
      log(`acquired the lease ${key} (epoch 1, first owner)`);
      return { epoch: 1, revision };
    }
    const held = decode(current);
    const epoch = held.epoch + 1;
    const revision = await kv.update(key, encode({ node, epoch, url }), current.revision);
    if (!(await stillLatest(options, revision))) return null;
    log(
      held.released
        ? `acquired the lease ${key} (epoch ${epoch}) released by ${held.node}`
        : `took over the lease ${key} (epoch ${epoch}) from ${held.node}: not renewed for ${leaseMs} ms`,
    );
    return { epoch, revision };
  } catch (error) {
    if (!isRefusal(error)) log(`lease ${key}: ${describeError(error)}; retrying`);
    return null;
  }
}

/**
 * nats-server 2.9 does not serialize the revision check with other writes of the key
 * (upstream issue 4320): a write racing ours, such as the holder's renewal, may be stored
 * as well, after ours. So a take counts only if the key's latest revision is still ours when
 * read back; the bucket answers reads from its stream leader (no direct gets, see
 * nats-cluster.ts), so the read sees every write stored before it. A holder whose renewal
 * landed after our write keeps the lease; one whose renewal landed before ours is refused at
 * its next renewal.
 */
async function stillLatest(options: LeaseOptions, revision: number): Promise<boolean> {
  const entry = await options.kv.get(options.key);
  if (entry?.revision === revision) return true;
  options.log(
    `lease ${options.key}: another write was stored after ours (revision ${revision}, now ${entry?.revision ?? 'none'}; ` +
      `the server did not serialize the revision check), so it is not taken`,
  );
  return false;
}

/** kv.create on an existing key and kv.update on a moved revision are refused with this (nats-errors.ts). */
const isRefusal = isWrongLastSequence;

function encode(value: LeaseValue): string {
  return JSON.stringify(value);
}

export function decode(entry: KvEntry): LeaseValue {
  const value = entry.json<Partial<LeaseValue>>();
  if (typeof value.node !== 'string' || typeof value.epoch !== 'number') {
    throw new Error(`lease ${entry.key} holds ${entry.string()}, not { node, epoch }`);
  }
  return { node: value.node, epoch: value.epoch, url: typeof value.url === 'string' ? value.url : '', released: value.released === true };
}
