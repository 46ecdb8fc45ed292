/**
 * Which partitions this node keeps, kept in line with the rule (partition-keepers.ts) as
 * the live set and the leases change (docs/cluster.md, "Partial replication: who keeps
 * what"). PartitionOwnership calls `look()` after each of its own looks (a membership or
 * lease change, and its timer).
 *
 * - **Taking up** a partition this node should keep and does not: its snapshot object is
 *   loaded and its subject replayed while the follower's messages for it are held back
 *   (PartitionLog.takeUp); only then does `keepsHere` say so. A take-up that fails drops
 *   what it loaded and is tried again after a lease (not in a loop).
 * - **Letting go** of one it keeps and should not: only once it has stayed unwanted here for a
 *   lease (a member that blinks out and back costs no take-up), and never while this node
 *   writes it or its lease is moving here or away. The follower skips its subject from then
 *   on and the engine drops its connections' state (Engine.dropConnectionsNotHeld).
 * - A writer takes up before it fences: `takeUp(key)` is what the lease's `onTaken` waits
 *   for (with CLUSTER_STANDBYS=0 a failover's new writer loads the partition here first).
 *
 * Every take-up and let-go is logged with what it cost, for an operator.
 */
import { describeError } from '../persistence/errors.ts';
import type { Member } from './membership.ts';
import { ACCOUNTS_KEY } from './nats-cluster.ts';
import { keepersOf } from './partition-keepers.ts';
import type { Keeping, PartitionPhase as LogPhase, TakeUpHandler, TakenUp } from './partition-log.ts';
import type { LeaseHolder } from './lease.ts';
import type { PartitionPhase } from './partition-ownership.ts';
import type { Placement } from './placement.ts';

/** What keeping needs of the engine. */
export interface KeepingEngine {
  /** A handler for one take-up: a fresh snapshot restorer, then records replayed (no listener told: nobody reads them here yet). */
  takeUpHandler(): TakeUpHandler;
  /** Drops the state of every connection whose partition is no longer kept here (nor being taken up). */
  dropNotHeld(): { connections: number; jobs: number; auditEntries: number };
  /** The connections and jobs held of partition `key` (for the log lines). */
  heldOf(key: string): { connections: number; jobs: number };
  /** The jobs held per partition key, in one pass over the connections held (the weights placement by size balances). */
  jobsByPartition(): Map<string, number>;
}

/** What keeping reads of the ownership: the live set, the leases, and this node's own part in them. */
export interface OwnershipView {
  members(): Member[];
  ownerOf(key: string): LeaseHolder;
  phaseOf(key: string): PartitionPhase | null;
  /** What this node keeps changed: say so in its membership key now rather than at the next refresh (a writer waits for it to hand over). */
  announceKeeps?(): void;
}

/** What keeping needs of the store (cluster-store.ts): each partition's keeping and phase, and the two moves. */
export interface KeptStore {
  readonly keys: string[];
  partition(key: string): { readonly keeping: Keeping; readonly phase: LogPhase };
  keeping(): string[];
  takeUp(key: string, handler: TakeUpHandler): Promise<TakenUp>;
  letGo(key: string): void;
}

export interface PartitionKeepingOptions {
  store: KeptStore;
  node: string;
  /** who keeps what for a live set (CLUSTER_STANDBYS is its) */
  placement: Placement;
  leaseMs: number;
  engine: KeepingEngine;
  log: (line: string) => void;
}

export class PartitionKeeping {
  private ownership: OwnershipView | undefined;
  private readonly takeUps = new Map<string, Promise<void>>();
  /** performance.now() since when a kept partition has been unwanted here */
  private readonly unwantedSinceMs = new Map<string, number>();
  /** performance.now() of a failed take-up: tried again after a lease */
  private readonly failedAtMs = new Map<string, number>();
  private stopped = false;

  constructor(private readonly options: PartitionKeepingOptions) {}

  /** Starts looking once the ownership (membership and leases) is known. */
  attach(ownership: OwnershipView): void {
    this.ownership = ownership;
    this.look();
  }

  /** No take-up or let-go starts after this (a clean stop hands everything over instead). */
  stop(): void {
    this.stopped = true;
  }

  /** Whether this node keeps `key`'s state now, applied and current. */
  keepsHere(key: string): boolean {
    return this.options.store.partition(key).keeping === 'kept';
  }

  /** The partitions kept here now (applied and current), the accounts included. */
  kept(): string[] {
    return this.options.store.keeping();
  }

  /** The live nodes that keep `key` by the rule, the wanted writer first. */
  keepersOf(key: string): Member[] {
    const members = this.ownership?.members() ?? [];
    const byNode = new Map(members.map((member) => [member.node, member]));
    return this.rule(new Set(byNode.keys()), key)
      .map((node) => byNode.get(node))
      .filter((member): member is Member => member !== undefined);
  }

  /**
   * The keepers of `key` among `live` by the rule: its placement's first 1 + CLUSTER_STANDBYS
   * and the lease's holder, or while a holder no longer live has not been replaced yet, the
   * heir that takes its lease (Placement.heir).
   */
  private rule(live: ReadonlySet<string>, key: string): string[] {
    const { placement } = this.options;
    const holder = this.ownership?.ownerOf(key)?.node ?? null;
    const writing = holder === null || live.has(holder) ? holder : placement.heir(live, key, holder);
    return keepersOf(key, placement.ranked(live, key), placement.standbys, writing);
  }

  /**
   * Keeps `key` here: resolves at once when it is kept, joins a take-up under way, or starts
   * one. Rejects when the take-up failed (what it loaded is dropped).
   */
  takeUp(key: string, reason = 'this node takes its lease'): Promise<void> {
    if (this.keepsHere(key)) return Promise.resolve();
    const running = this.takeUps.get(key);
    if (running !== undefined) return running;
    const run = this.runTakeUp(key, reason).finally(() => this.takeUps.delete(key));
    this.takeUps.set(key, run);
    return run;
  }

  /** Brings what is kept here in line with the rule (synchronous: take-ups run on their own). */
  look(): void {
    const ownership = this.ownership;
    if (ownership === undefined || this.stopped) return;
    const { store, node, leaseMs } = this.options;
    // this node counts itself live while it runs, also before its own key shows in the watch
    const live = new Set(ownership.members().map((member) => member.node)).add(node);
    const nowMs = performance.now();
    for (const key of store.keys) {
      if (key === ACCOUNTS_KEY) continue;
      // a holder no longer live (its lease lapsing) keeps nothing; its heir keeps on
      const keepers = this.rule(live, key);
      const partition = store.partition(key);
      const wanted = keepers.includes(node) || ownership.phaseOf(key) !== null || partition.phase !== 'following';
      if (wanted) {
        this.unwantedSinceMs.delete(key);
        if (partition.keeping !== 'not kept' || this.takeUps.has(key)) continue;
        if (nowMs - (this.failedAtMs.get(key) ?? -Infinity) < leaseMs) continue;
        this.takeUp(key, `kept by ${keepers.join(', ')} among ${live.size} live nodes`).catch(() => undefined); // logged by runTakeUp
        continue;
      }
      if (partition.keeping !== 'kept') continue;
      const since = this.unwantedSinceMs.get(key);
      if (since === undefined) this.unwantedSinceMs.set(key, nowMs);
      else if (nowMs - since >= leaseMs) this.letGo(key, `kept by ${keepers.join(', ')} among ${live.size} live nodes`);
    }
  }

  private async runTakeUp(key: string, reason: string): Promise<void> {
    const { store, engine, log, leaseMs } = this.options;
    log(`taking up ${key}: ${reason}`);
    try {
      const taken = await store.takeUp(key, engine.takeUpHandler());
      this.failedAtMs.delete(key);
      this.ownership?.announceKeeps?.();
      const held = engine.heldOf(key);
      log(
        `took up ${key} in ${Math.round(taken.durationMs)} ms: ${taken.snapshotSeq === 0 ? 'no snapshot' : `snapshot covering seq ${taken.snapshotSeq}`}, ${taken.records} log records replayed, ` +
          `${taken.heldBack} messages held back meanwhile; ${held.connections} connections and ${held.jobs} jobs kept here`,
      );
    } catch (error) {
      this.failedAtMs.set(key, performance.now());
      const dropped = engine.dropNotHeld();
      log(`taking up ${key} failed (${describeError(error)}); dropped what it loaded (${dropped.connections} connections, ${dropped.jobs} jobs); trying again in ${leaseMs} ms if still wanted here`);
      throw error;
    }
  }

  private letGo(key: string, reason: string): void {
    const { store, engine, log } = this.options;
    const startedAtMs = performance.now();
    this.unwantedSinceMs.delete(key);
    store.letGo(key);
    const dropped = engine.dropNotHeld();
    log(
      `let go of ${key} (${reason}): dropped ${dropped.connections} connections, ${dropped.jobs} jobs and ${dropped.auditEntries} audit entries ` +
        `in ${Math.round(performance.now() - startedAtMs)} ms`,
    );
  }
}
