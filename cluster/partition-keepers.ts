/**
 * Who keeps a partition's state (docs/cluster.md, "Partial replication: who keeps what"):
 * the first 1 + CLUSTER_STANDBYS nodes of its ranking over the live nodes (rendezvous.ts:
 * the wanted writer first, then the nodes that would take its lease in turn), plus the node
 * holding its lease now (a writer always keeps what it writes, also while its lease is
 * moving to the wanted node). The accounts partition is kept by every node: every request
 * checks a session or an API key against it.
 *
 * Pure: every node computes the same answer from the same live set and leases.
 */
import { ACCOUNTS_KEY } from './nats-cluster.ts';

/** CLUSTER_STANDBYS: a count of standbys, or every node keeping every partition. */
export type Standbys = number | 'all';

/**
 * The nodes that keep `partition`, the wanted writer first: `ranked` is the live nodes in
 * the partition's rendezvous order, `holder` the node its lease names now (null: nobody).
 */
export function keepersOf(partition: string, ranked: readonly string[], standbys: Standbys, holder: string | null): string[] {
  const keepers = partition === ACCOUNTS_KEY || standbys === 'all' ? [...ranked] : ranked.slice(0, 1 + standbys);
  if (holder !== null && !keepers.includes(holder)) keepers.push(holder);
  return keepers;
}

/** How many of `nodes` live nodes keep each data partition: its writer and its standbys, at most every node. */
export function keepersPerPartition(nodes: number, standbys: Standbys): number {
  return standbys === 'all' ? nodes : Math.min(nodes, 1 + standbys);
}
