/**
 * Ownership of many partitions: keeps this node's leases in line with the wanted
 * assignment, the placement over the live members (placement.ts).
 *
 * For every partition key (p.0 .. p.N-1 and `accounts`):
 * - wanted here and not held: take its lease, without waiting, when it is absent, released,
 *   or lapsed (its revision unchanged for LEASE_MS on this node's clock, from a watch of the
 *   leases bucket). Then `onTaken(p, epoch)` runs (the owner of the engine catches up and
 *   writes its fenced marker); until it resolves the partition is "taking over". A lease
 *   that lapsed with a holder no longer live goes to the holder's heir instead
 *   (Placement.heir: its standby, which keeps p already), so a failover needs no take-up.
 * - held and wanted elsewhere: hand it over once the wanted node keeps p (its membership key
 *   says so; until then this node goes on writing, so the partition is never unwritable
 *   while the new writer loads it). `release(p)` runs (the engine stops accepting writes for
 *   p and flushes them), the lease is renewed meanwhile, and then written `released`, so
 *   the wanted node takes it at once instead of after a lapse.
 * - beside nodes of the older version (a rolling upgrade: plain rendezvous, nothing said of
 *   what they keep): a node that says nothing is handed a partition only where plain
 *   rendezvous names it, and a lease free for two leases is taken by the node plain
 *   rendezvous names, so no partition stays unwritten while the versions disagree.
 * - held leases are renewed by one timer for all of them, every LEASE_MS / 4; a refused
 *   renewal calls `onLost(p, error)` (one that cannot get through is retried, see lease.ts).
 *
 * The lease's compare-and-set is what keeps two nodes from holding a partition: views of
 * membership may differ for a moment (one node has seen a join that another has not), and
 * then a node may want a partition that is still held, but it only takes a lease that is
 * released or has lapsed, and only one write on a given revision succeeds.
 *
 * `ownerOf(p)` is the holder as the watch shows it, for routing requests.
 */
import type { KV } from '@nats-io/kv';
import { describeError } from '../persistence/errors.ts';
import { PartitionLease, decode, renewalIntervalMs, type LeaseHolder } from './lease.ts';
import { Membership, type Member } from './membership.ts';
import type { Placement } from './placement.ts';
import { rankedNodes } from './rendezvous.ts';
import { WatchedBucket } from './watched-bucket.ts';

export interface PartitionOwnershipOptions {
  leases: KV;
  /** the jobwatch_nodes bucket: this node joins it on start and leaves it on stop */
  nodes: KV;
  node: string;
  url: string;
  leaseMs: number;
  /** who should write each lease key (partitionKey(0..N-1) and `accounts`: the placement's keys) for a live set */
  placement: Placement;
  log: (line: string) => void;
  /** This node won p's lease: catch up and write the fenced marker; p is served once this resolves. */
  onTaken(partition: string, epoch: number): Promise<void>;
  /** p is wanted elsewhere: stop accepting writes for it and flush them; the lease is released once this resolves. */
  release(partition: string): Promise<void>;
  /** p's lease was taken by another node (a renewal was refused): stop writing p at once. */
  onLost(partition: string, error: Error): void;
  /** What this node keeps now (partition-keeping.ts), announced in its membership key: a writer hands a partition over to it only once it keeps it. */
  keeps?: () => string[];
  /** The jobs held per partition kept here, announced in its membership key: the weights placement by size balances. */
  weights?: () => Record<string, number>;
  /** After every look at the members and the leases (what a node keeps follows them: partition-keeping.ts). */
  onLook?(): void;
}

export type PartitionPhase = 'taking' | 'taking over' | 'held' | 'handing over';

interface Held {
  phase: PartitionPhase;
  lease: PartitionLease | null; // null while 'taking'
}

export const ACCOUNTS_PARTITION = 'accounts';

export class PartitionOwnership {
  private readonly states = new Map<string, Held>();
  private readonly handovers = new Set<Promise<void>>();
  private readonly timer: ReturnType<typeof setInterval>;
  private watched!: WatchedBucket;
  private membership: Membership | undefined;
  private reconcileScheduled = false;
  /** performance.now() of a failed take-over per partition: retried after a lease, not in a loop */
  private readonly failedAtMs = new Map<string, number>();
  private stopping = false;
  private readonly complaints = new Set<string>();
  private readonly startedAtMs = performance.now();

  private constructor(private readonly options: PartitionOwnershipOptions) {
    this.timer = setInterval(() => this.tick(), renewalIntervalMs(options.leaseMs));
  }

  /** Watches the leases, joins the membership, and starts taking what is wanted here. */
  static async start(options: PartitionOwnershipOptions): Promise<PartitionOwnership> {
    const ownership = new PartitionOwnership(options);
    try {
      ownership.watched = await WatchedBucket.open(options.leases, 'the leases bucket', options.log, () => ownership.scheduleReconcile());
      const { nodes: kv, node, url, leaseMs, log, keeps, weights } = options;
      ownership.membership = await Membership.join({ kv, node, url, leaseMs, log, keeps, weights, onChange: () => ownership.scheduleReconcile() });
    } catch (error) {
      clearInterval(ownership.timer);
      ownership.watched?.stop();
      throw error;
    }
    ownership.reconcile();
    return ownership;
  }

  /** The live nodes as this node sees them. */
  members(): Member[] {
    return this.membership?.live() ?? [];
  }

  /**
   * The live nodes ranked for p, the wanted writer first (placement.ts): its writer and
   * then its standbys are taken from the front of this list.
   */
  ranked(partition: string): Member[] {
    const byNode = new Map(this.members().map((member) => [member.node, member]));
    return this.options.placement.ranked(byNode.keys(), partition).map((node) => byNode.get(node)!);
  }

  /** Writes this node's membership key now: what it keeps changed (a writer waiting to hand a partition over reads it there). */
  announceKeeps(): void {
    this.membership?.announce();
  }

  /** Who holds p as the leases' watch shows it; null when released or never taken. */
  ownerOf(partition: string): LeaseHolder {
    const entry = this.watched.get(partition)?.entry;
    if (entry === undefined || entry.operation !== 'PUT') return null;
    try {
      const held = decode(entry);
      return held.released ? null : { node: held.node, url: held.url };
    } catch {
      return null; // unreadable: nobody to route to (reconcile logs it)
    }
  }

  /** p's phase on this node, or null when this node neither holds nor is taking it. */
  phaseOf(partition: string): PartitionPhase | null {
    return this.states.get(partition)?.phase ?? null;
  }

  /** The partitions this node serves (taken and caught up). */
  held(): string[] {
    return this.options.placement.keys.filter((partition) => this.states.get(partition)?.phase === 'held');
  }

  /**
   * A clean stop: leaves the membership (every node sees this one gone at once and wants
   * its partitions), then hands every partition over together, without a lapse.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.membership?.leave();
    // a take in flight finishes first, so its lease is handed over rather than left to lapse
    while ([...this.states.values()].some((state) => state.phase === 'taking' || state.phase === 'taking over')) await Bun.sleep(20);
    for (const [partition, state] of this.states) {
      if (state.phase === 'held' && state.lease !== null) void this.handOver(partition, state.lease, 'this node is stopping');
    }
    await Promise.all(this.handovers); // the ones started just now and any already under way
    clearInterval(this.timer);
    this.watched.stop();
  }

  private tick(): void {
    for (const state of this.states.values()) void state.lease?.renew();
    this.reconcile(); // leases and members that lapsed since the last look
  }

  /** Looks again soon: the placement changed (a new placement map), so the wanted writers may have. */
  lookAgain(): void {
    this.scheduleReconcile();
  }

  /**
   * Every renewal of every node comes through the watches: the entries a watch delivers
   * together are looked at once, in the next turn of the event loop.
   */
  private scheduleReconcile(): void {
    if (this.reconcileScheduled) return;
    this.reconcileScheduled = true;
    setTimeout(() => this.reconcile(), 0);
  }

  /** Brings the leases in line with the wanted assignment (synchronous: the hooks and NATS writes it starts run on their own). */
  private reconcile(): void {
    this.reconcileScheduled = false;
    if (this.stopping || this.membership === undefined) return;
    const members = this.membership.live();
    const live = members.map((member) => member.node);
    const { placement, node } = this.options;
    for (const partition of placement.keys) {
      const state = this.states.get(partition);
      try {
        if (state === undefined) {
          // free (absent, released, lapsed) leases go to the wanted writer, or to the heir of a holder gone
          const holder = this.ownerOf(partition)?.node ?? null;
          const heir = placement.heir(live, partition, holder);
          if (heir === node) {
            const gone = holder !== null && !live.includes(holder);
            this.tryTake(partition, gone ? `the heir of ${holder}, gone, among ${live.length} live nodes` : `wanted here among ${live.length} live nodes`);
          } else if (olderVersionWriter(live, partition) === node && this.freeForMs(partition) >= 2 * this.options.leaseMs) {
            // Free for two leases and not taken by the placement's choice: a node of an older
            // version (a rolling upgrade) wants by plain rendezvous and takes only what that names,
            // so the node plain rendezvous names takes it rather than leave the partition unwritten.
            this.tryTake(partition, `free for two leases, not taken by ${heir ?? 'anyone'}, named here by plain rendezvous among ${live.length} live nodes`);
          }
          continue;
        }
        const wanted = placement.writer(live, partition);
        if (state.phase === 'held' && state.lease !== null && wanted !== null && wanted !== node && takesWhenReleased(members, wanted, partition)) {
          void this.handOver(partition, state.lease, `wanted by ${wanted} among ${live.length} live nodes`);
        }
      } catch (error) {
        // a lease value this code cannot read: the other partitions go on; said once, not at every look
        const complaint = `${partition}: ${describeError(error)}`;
        if (!this.complaints.has(complaint)) this.options.log(`cannot judge the lease ${complaint}`);
        this.complaints.add(complaint);
      }
    }
    this.options.onLook?.();
  }

  /** How long `partition`'s lease has gone unchanged as this node heard it (not across its own outage, nor from before it started); 0 while it is renewed. */
  private freeForMs(partition: string): number {
    const observed = this.watched.get(partition);
    return performance.now() - Math.max(observed?.sinceMs ?? this.startedAtMs, this.membership?.reachableSinceMs ?? 0, this.startedAtMs);
  }

  private tryTake(partition: string, why: string): void {
    const observed = this.watched.get(partition);
    const entry = observed?.entry ?? null;
    // counted only while this node could hear renewals (Membership.reachableSinceMs): not across its own outage
    const unchangedForMs = observed === undefined ? 0 : this.freeForMs(partition);
    if (entry !== null && entry.operation === 'PUT' && !decode(entry).released && unchangedForMs < this.options.leaseMs) return; // held and renewed
    if (performance.now() - (this.failedAtMs.get(partition) ?? -Infinity) < this.options.leaseMs) return;
    this.states.set(partition, { phase: 'taking', lease: null });
    void (async () => {
      let lease: PartitionLease | null = null;
      try {
        lease = await PartitionLease.tryAcquire(this.leaseOptions(partition, () => lease), { entry, unchangedForMs });
      } catch (error) {
        this.options.log(`taking ${partition} failed: ${describeError(error)}`);
      }
      if (lease === null) {
        this.states.delete(partition);
        return;
      }
      this.options.log(`${partition} is ${why}: taking over (epoch ${lease.epoch})`);
      this.states.set(partition, { phase: 'taking over', lease });
      try {
        await this.options.onTaken(partition, lease.epoch);
      } catch (error) {
        this.options.log(`taking over ${partition} failed (${describeError(error)}); releasing its lease, trying again in ${this.options.leaseMs} ms if still wanted here`);
        this.failedAtMs.set(partition, performance.now());
        if (this.states.get(partition)?.lease === lease) this.states.delete(partition);
        await lease.release();
        return;
      }
      const state = this.states.get(partition);
      if (state?.lease !== lease) return; // lost while taking over: onLost has run
      state.phase = 'held';
      this.options.log(`serving ${partition} (epoch ${lease.epoch})`);
      this.reconcile(); // membership may have changed meanwhile
    })();
  }

  private handOver(partition: string, lease: PartitionLease, reason: string): Promise<void> {
    const state = this.states.get(partition);
    if (state?.lease !== lease || state.phase !== 'held') return Promise.resolve();
    state.phase = 'handing over';
    const handover = this.releaseToWanted(partition, lease, reason).finally(() => this.handovers.delete(handover));
    this.handovers.add(handover);
    return handover;
  }

  private async releaseToWanted(partition: string, lease: PartitionLease, reason: string): Promise<void> {
    this.options.log(`handing ${partition} over (epoch ${lease.epoch}): ${reason}`);
    try {
      await this.options.release(partition);
    } catch (error) {
      // the engine could not flush (it halts on a failed log): the next owner replays what is durable
      this.options.log(`the release of ${partition} failed (${describeError(error)}); releasing its lease anyway`);
    }
    await lease.release();
    if (this.states.get(partition)?.lease === lease) this.states.delete(partition);
    this.reconcile();
  }

  private leaseOptions(partition: string, current: () => PartitionLease | null) {
    const { leases, node, url, leaseMs, log } = this.options;
    return {
      kv: leases,
      key: partition,
      node,
      url,
      leaseMs,
      log,
      onLost: (error: Error) => {
        const state = this.states.get(partition);
        if (state === undefined || state.lease !== current()) return;
        this.states.delete(partition);
        this.options.onLost(partition, error);
        this.reconcile();
      },
    };
  }
}

/**
 * Whether `node` would take `partition` if this holder released it now: it says (its
 * membership key) that it keeps the partition. A node that says nothing runs an older
 * version, which takes a free lease only where plain rendezvous names it: handed over to
 * only then, or the partition would stay unwritten.
 */
function takesWhenReleased(members: readonly Member[], node: string, partition: string): boolean {
  const keeps = members.find((member) => member.node === node)?.keeps;
  if (keeps !== undefined) return keeps.includes(partition);
  return olderVersionWriter(members.map((member) => member.node), partition) === node;
}

/** The writer a node of the older version wants for `partition` among `live`: plain rendezvous. */
function olderVersionWriter(live: readonly string[], partition: string): string | undefined {
  return rankedNodes(live, partition)[0];
}
