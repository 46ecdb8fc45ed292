/**
 * Placement by size, the coordinating side (docs/cluster.md, "Placement by size"): every
 * CLUSTER_REBALANCE_SECONDS the live node with the smallest id looks at the weights every
 * member publishes (the jobs held per partition it keeps) and, when the heaviest node keeps
 * more than the band above the mean, writes a placement map with one move more
 * (size-balance.ts) to the placement bucket. Every node reads the map through its watch
 * (open-cluster.ts) and the move happens as any placement change does: a take-up on the new
 * keeper, a handover once it keeps the partition, a let-go on the old one after a lease.
 *
 * It moves only when the cluster is settled: every live member publishes weights (a node of
 * an older version says nothing of them, and places by count), every keeper the placement
 * names lists the partition as kept, and every lease is held by its wanted writer. So one
 * move finishes before the next is decided, and a coordinator that sees a stale map cannot
 * write over a newer one (the write is a compare-and-set on the key's revision).
 */
import type { KV } from '@nats-io/kv';
import { describeError } from '../persistence/errors.ts';
import type { LeaseHolder } from './lease.ts';
import type { Member } from './membership.ts';
import { ACCOUNTS_KEY } from './nats-cluster.ts';
import { keepersPerPartition } from './partition-keepers.ts';
import { encodePlacementMap, PLACEMENT_MAP_KEY } from './placement-map.ts';
import type { Placement } from './placement.ts';
import { balanceStep, keptWeights, type BalanceMove } from './size-balance.ts';

export interface SizeRebalancerOptions {
  /** the jobwatch_placement bucket */
  kv: KV;
  node: string;
  placement: Placement;
  /** CLUSTER_REBALANCE_SECONDS in ms (> 0) */
  intervalMs: number;
  members(): Member[];
  ownerOf(key: string): LeaseHolder;
  log: (line: string) => void;
}

export class SizeRebalancer {
  private readonly timer: ReturnType<typeof setInterval>;
  private running = false;
  private waitingFor = '';
  /** the revision of the last map this node wrote: no further move is decided until the watch has put it in force */
  private written = 0;

  constructor(private readonly options: SizeRebalancerOptions) {
    this.timer = setInterval(() => void this.tick(), options.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.balanceOnce();
    } catch (error) {
      this.options.log(`placement by size: writing the placement map failed (${describeError(error)}); trying again in ${this.options.intervalMs} ms`);
    } finally {
      this.running = false;
    }
  }

  private async balanceOnce(): Promise<void> {
    const { placement, node, kv, log } = this.options;
    const members = this.options.members();
    const live = members.map((member) => member.node);
    if (live[0] !== node) return; // the live node with the smallest id coordinates (members() is sorted)
    const unsettled = this.unsettled(members);
    if (unsettled !== null) {
      // said once per reason, not at every interval
      if (unsettled !== this.waitingFor && unsettled.startsWith('node ')) log(`placement by size: not balancing while ${unsettled}`);
      this.waitingFor = unsettled;
      return;
    }
    this.waitingFor = '';
    const weights = weightsOf(members, placement.keys, this.options.ownerOf);
    const keys = dataKeys(placement.keys);
    const slots = keepersPerPartition(live.length, placement.standbys);
    const rankings = placement.rankingsOf(live);
    const step = balanceStep(rankings, keys, weights, slots);
    if (step === null) return;
    const { map: previous, revision } = placement.mapInForce;
    if (revision < this.written) return;
    const moves = (placement.mapCovers(live) && previous !== null ? previous.moves : 0) + 1;
    const value = encodePlacementMap({
      nodes: [...live].sort(),
      standbys: String(placement.standbys),
      rankings: Object.fromEntries(placement.keys.map((key) => [key, step.rankings.get(key) ?? [...rankings.get(key)!]])),
      writtenBy: node,
      moves,
    });
    // compare-and-set on the map this node decided from: a newer map (another coordinator's) refuses it
    this.written = revision === 0 ? await kv.create(PLACEMENT_MAP_KEY, value) : await kv.update(PLACEMENT_MAP_KEY, value, revision);
    const before = keptWeights(rankings, keys, weights, slots);
    const after = keptWeights(step.rankings, keys, weights, slots);
    log(`placement by size: ${describeMove(step.move)}; kept jobs per node ${describeWeights(before)} -> ${describeWeights(after)} (move ${moves} over ${live.length} live nodes)`);
  }

  /** Why the cluster is not ready for a move (a member without weights, a move under way), or null. */
  private unsettled(members: readonly Member[]): string | null {
    const { placement, ownerOf } = this.options;
    const silent = members.find((member) => member.weights === undefined);
    if (silent !== undefined) return `node ${silent.node} publishes no weights (an older version places by count)`;
    const live = members.map((member) => member.node);
    const slots = keepersPerPartition(live.length, placement.standbys);
    for (const key of dataKeys(placement.keys)) {
      const ranked = placement.ranked(live, key);
      if (ownerOf(key)?.node !== ranked[0]) return `${key} is not yet written by ${ranked[0]}`;
      const pending = ranked.slice(0, slots).find((keeper) => !(members.find((member) => member.node === keeper)?.keeps ?? []).includes(key));
      if (pending !== undefined) return `${key} is not yet kept by ${pending}`;
    }
    return null;
  }
}

/** Each data partition's weight: what its writer says it holds, else the most any keeper says. */
function weightsOf(members: readonly Member[], keys: readonly string[], ownerOf: (key: string) => LeaseHolder): Map<string, number> {
  return new Map(
    dataKeys(keys).map((key) => {
      const writer = members.find((member) => member.node === ownerOf(key)?.node)?.weights?.[key];
      return [key, writer ?? Math.max(0, ...members.map((member) => member.weights?.[key] ?? 0))];
    }),
  );
}

function dataKeys(keys: readonly string[]): string[] {
  return keys.filter((key) => key !== ACCOUNTS_KEY);
}

function describeMove(move: BalanceMove): string {
  const slot = (rank: number) => (rank === 0 ? 'writer' : `standby ${rank}`);
  const gave = `${move.gave.key} (${move.gave.weight} jobs, ${slot(move.gave.rank)}) from ${move.from} to ${move.to}`;
  return move.took === null ? `moved ${gave}` : `swapped ${gave} for ${move.took.key} (${move.took.weight} jobs, ${slot(move.took.rank)})`;
}

function describeWeights(kept: ReadonlyMap<string, number>): string {
  return [...kept].sort(([a], [b]) => (a < b ? -1 : 1)).map(([node, jobs]) => `${node} ${jobs}`).join(', ');
}
