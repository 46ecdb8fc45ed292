/**
 * Balancing the placement by what partitions hold (docs/cluster.md, "Placement by size"): the
 * counted placement (placement.ts) gives every node an even number of partitions, but 30
 * connections hashed onto 16 partitions put 0 to 5 on one, so even counts are uneven jobs.
 * Given the rankings in force and each partition's weight (the jobs it holds), one step
 * moves one keeper slot, or swaps two, from the node keeping the most weight to another,
 * only while that node keeps more than REBALANCE_BAND (5%) above the mean, and only when the move
 * strictly lowers its kept weight without raising the other node to it. Each step brings
 * the two nodes' weights strictly closer, so repeated steps end (at the band, or where no
 * slot can move without overshooting).
 *
 * Pure and deterministic: candidates are tried in a fixed order and ties keep the first.
 */

/**
 * Move only while the heaviest node keeps more than this fraction above the mean kept weight.
 * 5%, not wider: three nodes without standbys, each with its ~100 MB footprint besides the
 * jobs, come to about 0.40 of one node at an even third of 1M jobs, and a node at 10% over
 * the mean would sit near 0.47, past the 0.45 the cluster is sized for.
 */
export const REBALANCE_BAND = 0.05;

/** A ranking per key: every live node once, the first `slots` keeping it (the writer first). */
export type RankingTable = ReadonlyMap<string, readonly string[]>;

export interface BalanceMove {
  /** the node that kept the most weight, and the one it gave to */
  from: string;
  to: string;
  /** the slot given away: key and rank (0: the writer) */
  gave: { key: string; rank: number; weight: number };
  /** with a swap, the slot taken back from `to` */
  took: { key: string; rank: number; weight: number } | null;
}

export interface BalanceStep {
  rankings: Map<string, string[]>;
  move: BalanceMove;
}

/** The weight each node keeps: the sum of the weights of the keys in whose first `slots` it stands. */
export function keptWeights(rankings: RankingTable, keys: readonly string[], weights: ReadonlyMap<string, number>, slots: number): Map<string, number> {
  const kept = new Map<string, number>();
  for (const ranking of rankings.values()) for (const node of ranking) kept.set(node, 0);
  for (const key of keys) {
    const weight = weights.get(key) ?? 0;
    for (const node of rankings.get(key)?.slice(0, slots) ?? []) kept.set(node, kept.get(node)! + weight);
  }
  return kept;
}

/** Whether the heaviest node keeps more than the band above the mean (a step is wanted). */
export function outsideBand(kept: ReadonlyMap<string, number>, band = REBALANCE_BAND): boolean {
  const loads = [...kept.values()];
  if (loads.length === 0) return false;
  const mean = loads.reduce((sum, load) => sum + load, 0) / loads.length;
  return Math.max(...loads) > mean * (1 + band);
}

/**
 * One move toward even kept weight over `keys` (the data partitions; every other key's
 * ranking is carried over unchanged), or null when the heaviest node is within the band or
 * no move lowers it. `slots`: 1 + CLUSTER_STANDBYS, at most the live nodes.
 */
export function balanceStep(rankings: RankingTable, keys: readonly string[], weights: ReadonlyMap<string, number>, slots: number, band = REBALANCE_BAND): BalanceStep | null {
  const kept = keptWeights(rankings, keys, weights, slots);
  if (!outsideBand(kept, band)) return null;
  const nodes = [...kept.keys()].sort();
  const heaviest = nodes.reduce((best, node) => (kept.get(node)! > kept.get(best)! ? node : best));
  const heavy = kept.get(heaviest)!;
  const slotsOf = (node: string) =>
    keys.flatMap((key) => {
      const rank = rankings.get(key)!.indexOf(node);
      return rank >= 0 && rank < slots ? [{ key, rank, weight: weights.get(key) ?? 0 }] : [];
    });
  const keeps = (node: string, key: string) => {
    const rank = rankings.get(key)!.indexOf(node);
    return rank >= 0 && rank < slots;
  };
  const given = slotsOf(heaviest);
  let best: { move: BalanceMove; peak: number; squares: number } | null = null;
  const consider = (move: BalanceMove, shift: number, light: number) => {
    const after = [heavy - shift, light + shift];
    const peak = Math.max(...after);
    // strictly lower the heaviest, and the receiver stays below where the heaviest was
    if (shift <= 0 || peak >= heavy) return;
    const squares = after[0]! ** 2 + after[1]! ** 2;
    // the lowest resulting peak; then the most even pair; then a standby's slot before a writer's (no handover)
    if (best === null || peak < best.peak || (peak === best.peak && (squares < best.squares || (squares === best.squares && move.gave.rank > best.move.gave.rank)))) {
      best = { move, peak, squares };
    }
  };
  for (const to of nodes) {
    if (to === heaviest) continue;
    const light = kept.get(to)!;
    const taken = slotsOf(to).filter((slot) => !keeps(heaviest, slot.key));
    for (const gave of given) {
      if (keeps(to, gave.key)) continue;
      consider({ from: heaviest, to, gave, took: null }, gave.weight, light);
      for (const took of taken) consider({ from: heaviest, to, gave, took }, gave.weight - took.weight, light);
    }
  }
  if (best === null) return null;
  const { move } = best as { move: BalanceMove };
  const next = new Map([...rankings].map(([key, ranking]) => [key, [...ranking]]));
  swapIn(next.get(move.gave.key)!, move.from, move.to);
  if (move.took !== null) swapIn(next.get(move.took.key)!, move.to, move.from);
  return { rankings: next, move };
}

/** `from` and `to` trade places in one ranking (it stays a ranking of every node once). */
function swapIn(ranking: string[], from: string, to: string): void {
  const at = ranking.indexOf(from);
  const other = ranking.indexOf(to);
  ranking[at] = to;
  ranking[other] = from;
}
