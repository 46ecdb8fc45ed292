/**
 * Where each partition lives for a given live set (docs/cluster.md, "Placement"): for every
 * partition, the live nodes in the order its writer and then its standbys are chosen in.
 * The one seam every caller asks: who keeps a partition (partition-keepers.ts), who should
 * write it (partition-ownership.ts), what a node recovers at start (open-cluster.ts).
 *
 * Plain rendezvous hashing (rendezvous.ts) picks each partition's ranking on its own, so a
 * node keeps what the dice give it: 16 partitions with one standby over 3 nodes came out as
 * 11 / 13 / 8 kept. Here the rankings are bounded-load rendezvous, decided rank slot by rank
 * slot: first every data partition's writer, then every one's first standby, and so on,
 * each partition (in index order) giving the slot to the highest node of its own rendezvous
 * ranking that does not hold a slot of it yet and is still under its share of the
 * partitions kept so far (writer and standbys counted together; the accounts, which every
 * node keeps, not counted). A share is the floor or the ceiling of an even split, with no
 * more nodes at the ceiling than the remainder allows, so every node writes and keeps within
 * one of an even share; the accounts' writer is then one of the nodes that write fewest.
 * When no node under its share is left for a partition (the ones under it already hold a
 * slot of it), earlier partitions pass their slots of that rank along a chain that ends at
 * one of them, and this partition takes the node at its start (the counts stay within the
 * shares). The nodes below the standbys follow in rendezvous order.
 *
 * Pure and deterministic: every node computes the same from the same live set (in any order)
 * and the same keys, with no round trip. A change of the live set moves little: a partition
 * keeps its rendezvous choice wherever the bounds allow, so a node leaving moves its own
 * slots and the few that the new bounds shift (test/cluster/placement.test.ts measures it).
 */
import { ACCOUNTS_KEY } from './nats-cluster.ts';
import { keepersPerPartition, type Standbys } from './partition-keepers.ts';
import type { PlacementMap } from './placement-map.ts';
import { rankedNodes } from './rendezvous.ts';

/** Every key's ranking over one live set: writer first, then its standbys, then the other live nodes. */
export type Rankings = ReadonlyMap<string, readonly string[]>;

/**
 * The rankings of `keys` over `live`. `standbys` says how many rank slots after the writer are
 * balanced (with `all` every node keeps every partition, so only the writers are).
 */
export function placeRankings(live: Iterable<string>, keys: readonly string[], standbys: Standbys): Rankings {
  const nodes = [...new Set(live)].sort();
  const rendezvous = new Map(keys.map((key) => [key, rankedNodes(nodes, key)]));
  const chosen = new Map(keys.map((key) => [key, [] as string[]]));
  if (nodes.length === 0) return chosen;
  const dataKeys = keys.filter((key) => key !== ACCOUNTS_KEY);
  const balancedRanks = standbys === 'all' ? 1 : keepersPerPartition(nodes.length, standbys);
  const keeps = new Shares(nodes);
  for (let rank = 0; rank < balancedRanks; rank++) {
    keeps.grow(dataKeys.length);
    for (const key of dataKeys) {
      const holding = chosen.get(key)!;
      const candidates = rendezvous.get(key)!.filter((node) => !holding.includes(node));
      const underShare = (node: string) => keeps.under(node);
      const direct = candidates.find(underShare);
      const exchange = direct === undefined ? exchanged(key, rank, nodes, chosen, underShare) : undefined;
      const node = direct ?? exchange?.giver ?? leastLoaded(candidates, keeps);
      holding.push(node);
      keeps.add(exchange?.receiver ?? node);
    }
    // the accounts' writer: one of the nodes that write fewest, the writers' loads being the first rank's
    if (rank === 0 && keys.includes(ACCOUNTS_KEY)) chosen.get(ACCOUNTS_KEY)!.push(leastLoaded(rendezvous.get(ACCOUNTS_KEY)!, keeps));
  }
  for (const key of keys) {
    const holding = chosen.get(key)!;
    for (const node of rendezvous.get(key)!) if (!holding.includes(node)) holding.push(node);
  }
  return chosen;
}

/**
 * When every node under its share already holds a slot of `key` (only after the writers: a
 * writer's slot excludes nobody): `key` takes a node that does not hold it, and that node
 * passes one of its slots of this rank to another node that can take it, and so on until a
 * node under its share takes one (a shortest such chain, searched breadth first in a fixed
 * order, so every node makes the same moves). Every node's load stays as it was but the
 * last one's, which is under its share. Returns the node `key` gets and the one that got a
 * slot more, or undefined when no chain exists.
 */
function exchanged(
  key: string,
  rank: number,
  nodes: readonly string[],
  chosen: ReadonlyMap<string, string[]>,
  underShare: (node: string) => boolean,
): { giver: string; receiver: string } | undefined {
  const holding = chosen.get(key)!;
  /** how each node was reached: from which node, by moving which partition's slot to it */
  const reached = new Map<string, { from: string; partition: string } | null>();
  const queue = nodes.filter((node) => !holding.includes(node));
  for (const node of queue) reached.set(node, null);
  for (let next = 0; next < queue.length; next++) {
    const from = queue[next]!;
    for (const [partition, partitionHolding] of chosen) {
      if (partition === key || partition === ACCOUNTS_KEY || partitionHolding[rank] !== from) continue;
      for (const to of nodes) {
        if (reached.has(to) || partitionHolding.includes(to)) continue;
        reached.set(to, { from, partition });
        if (!underShare(to)) {
          queue.push(to);
          continue;
        }
        // move the slots along the chain, back to the node `key` takes
        let node = to;
        for (let step = reached.get(node); step !== null && step !== undefined; step = reached.get(node)) {
          chosen.get(step.partition)![rank] = node;
          node = step.from;
        }
        return { giver: node, receiver: to };
      }
    }
  }
  return undefined;
}

/**
 * Slots handed out over nodes so that every node ends with the floor or the ceiling of an
 * even share, and no more nodes with the ceiling than the remainder allows: a node is under
 * its share below the floor, or at the floor while nodes at the ceiling are still wanted.
 */
class Shares {
  private readonly load: Map<string, number>;
  private floor = 0;
  private remainder = 0;
  private atCeiling = 0;
  private total = 0;

  constructor(private readonly nodes: readonly string[]) {
    this.load = new Map(nodes.map((node) => [node, 0]));
  }

  /** `slots` more to hand out (the next rank's). */
  grow(slots: number): void {
    this.total += slots;
    this.floor = Math.floor(this.total / this.nodes.length);
    this.remainder = this.total % this.nodes.length;
    this.atCeiling = this.nodes.filter((node) => this.load.get(node)! > this.floor).length;
  }

  of(node: string): number {
    return this.load.get(node)!;
  }

  under(node: string): boolean {
    const load = this.load.get(node)!;
    return load < this.floor || (load === this.floor && this.atCeiling < this.remainder);
  }

  add(node: string): void {
    const load = this.load.get(node)! + 1;
    this.load.set(node, load);
    if (load === this.floor + 1) this.atCeiling += 1;
  }
}

/** The first of `candidates` (in rank order) with the fewest slots: where a slot goes when every node under its share already holds one of the partition's. */
function leastLoaded(candidates: readonly string[], shares: Shares): string {
  let best = candidates[0]!;
  for (const node of candidates) if (shares.of(node) < shares.of(best)) best = node;
  return best;
}

/**
 * The placement of a fixed set of keys under one CLUSTER_STANDBYS, asked per partition by
 * every caller: the rankings of the last few live sets asked about are kept, since the
 * cluster front asks for every request routed and the live set rarely changes.
 *
 * With a placement map in force (placement-map.ts, written by the node balancing by size):
 * a live set the map covers (every live node named in it) is ranked as the map says, with
 * the nodes no longer live left out, so a writer's heir is its standby in the map and a
 * node leaving moves only its own slots; a live set with a node the map does not name (a
 * node joined) gets the counted placement until a map is written for it.
 */
export class Placement {
  private readonly cached = new Map<string, Rankings>();
  private map: PlacementMap | null = null;
  private revision = 0;

  constructor(
    readonly keys: readonly string[],
    readonly standbys: Standbys,
  ) {}

  /** The map in force and the revision of its key (0: none). */
  get mapInForce(): { map: PlacementMap | null; revision: number } {
    return { map: this.map, revision: this.revision };
  }

  /** Puts `map` in force (null: the counted placement); returns whether the rankings may have changed. */
  useMap(map: PlacementMap | null, revision: number): boolean {
    if (revision === this.revision && (map === null) === (this.map === null)) return false;
    this.map = map;
    this.revision = map === null ? 0 : revision;
    this.cached.clear();
    return true;
  }

  /** Whether the map in force ranks `live` (every live node named in it). */
  mapCovers(live: Iterable<string>): boolean {
    const named = this.map?.nodes;
    if (named === undefined) return false;
    const nodes = [...live];
    return nodes.length > 0 && nodes.every((node) => named.includes(node));
  }

  /** The live nodes ranked for `key`, its writer first, then its standbys; [] for a key not placed or no live node. */
  ranked(live: Iterable<string>, key: string): readonly string[] {
    return this.rankings(live).get(key) ?? [];
  }

  /** Every key's ranking over `live` as this placement gives it (the map's where it covers `live`). */
  rankingsOf(live: Iterable<string>): Rankings {
    return this.rankings(live);
  }

  /** The node that should write `key` among `live` (null when none is live). */
  writer(live: Iterable<string>, key: string): string | null {
    return this.ranked(live, key)[0] ?? null;
  }

  /**
   * Who takes `key`'s lease when it is free: its wanted writer, except when the lease lapsed
   * with a holder that is no longer live. Then it is the first live node of the ranking as
   * it was while that holder lived, its standby: the node that keeps the partition already,
   * so a failover is the lease plus milliseconds, not a take-up. (The wanted writer over the
   * new live set may be another node; the lease moves there by a handover once that node
   * keeps the partition: partition-ownership.ts.)
   */
  heir(live: Iterable<string>, key: string, holder: string | null): string | null {
    const liveSet = new Set(live);
    if (holder === null || liveSet.has(holder)) return this.writer(liveSet, key);
    return this.ranked([...liveSet, holder], key).find((node) => liveSet.has(node)) ?? null;
  }

  private rankings(live: Iterable<string>): Rankings {
    const nodes = [...new Set(live)].sort();
    const signature = nodes.join('\u0000');
    let rankings = this.cached.get(signature);
    if (rankings === undefined) {
      rankings = this.mapCovers(nodes) ? this.mapped(nodes) : placeRankings(nodes, this.keys, this.standbys);
      if (this.cached.size >= 8) this.cached.delete(this.cached.keys().next().value!);
      this.cached.set(signature, rankings);
    }
    return rankings;
  }

  /** The map's rankings with the nodes not in `live` left out: each gone node's slots pass to the next of the map's order. */
  private mapped(live: readonly string[]): Rankings {
    const rankings = this.map!.rankings;
    return new Map(this.keys.map((key) => [key, rankings[key]!.filter((node) => live.includes(node))]));
  }
}
