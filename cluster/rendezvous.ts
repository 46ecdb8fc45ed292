/**
 * Which live node should own a partition: rendezvous (highest random weight) hashing.
 * Every node computes the same answer from the same set of live nodes, with no
 * coordination, and a change of that set moves only what it must: a node that joins
 * becomes the highest weight of about 1/N of the partitions (and only those move, to
 * it), and a node that leaves gives each of its partitions to whichever other node
 * weighs most for it, so they spread over the survivors.
 *
 * The weight is FNV-1a (32-bit, UTF-8) over `node NUL partition` followed by MurmurHash3's
 * finalizer: FNV alone leaves the high bits of similar strings (node-1, node-2) correlated,
 * and the finalizer's avalanche makes the weights of one partition independent enough
 * for an even spread. Pure and seedless, so every process agrees.
 */
import { fnv1a32 } from '../actors/partition-of.ts';

export function rendezvousWeight(node: string, partition: string): number {
  let hash = fnv1a32(`${node}\u0000${partition}`);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** The node that should own `partition` among `nodes` (null when there is none); equal weights go to the smaller node id. */
export function wantedOwner(nodes: Iterable<string>, partition: string): string | null {
  let best: string | null = null;
  let bestWeight = -1;
  for (const node of nodes) {
    const weight = rendezvousWeight(node, partition);
    if (weight > bestWeight || (weight === bestWeight && best !== null && node < best)) {
      best = node;
      bestWeight = weight;
    }
  }
  return best;
}

/**
 * Every node of `nodes` ranked for `partition`, the wanted owner first: the order a
 * partition's writer and then its standbys are chosen in (equal weights: the smaller id first).
 */
export function rankedNodes(nodes: Iterable<string>, partition: string): string[] {
  return [...nodes]
    .map((node) => ({ node, weight: rendezvousWeight(node, partition) }))
    .sort((a, b) => b.weight - a.weight || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
    .map(({ node }) => node);
}

/** The wanted owner of every partition, in the order given. */
export function wantedAssignment(nodes: readonly string[], partitions: readonly string[]): Map<string, string | null> {
  return new Map(partitions.map((partition) => [partition, wantedOwner(nodes, partition)]));
}
