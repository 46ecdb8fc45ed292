/**
 * Who keeps a partition (cluster/partition-keepers.ts): the first 1 + CLUSTER_STANDBYS nodes
 * of its ranking, plus the lease's holder; the accounts and CLUSTER_STANDBYS=all every node.
 * Pure, so every node computes the same keepers from the same live set (the rankings
 * themselves: test/cluster/placement.test.ts).
 */
import { expect, test } from 'bun:test';
import { keepersOf, keepersPerPartition } from '../../cluster/partition-keepers.ts';
import { Placement } from '../../cluster/placement.ts';

const NODES = ['node-a', 'node-b', 'node-c'];
const PARTITIONS = Array.from({ length: 64 }, (_, index) => `p.${index}`);
/** Rankings as the cluster makes them (how even they are, and what a change of nodes moves: placement.test.ts). */
const PLACEMENT = new Placement([...PARTITIONS, 'accounts'], 'all');
const rankedNodes = (nodes: readonly string[], partition: string): string[] => [...PLACEMENT.ranked(nodes, partition)];

test('standbys 0: the wanted writer alone; 1: the writer then the node that would take its lease; all: every node, ranked', () => {
  for (const partition of PARTITIONS) {
    const ranked = rankedNodes(NODES, partition);
    expect(keepersOf(partition, ranked, 0, null)).toEqual([ranked[0]!]);
    expect(keepersOf(partition, ranked, 1, null)).toEqual(ranked.slice(0, 2));
    expect(keepersOf(partition, ranked, 'all', null)).toEqual(ranked);
    // more standbys than nodes: every node, none twice
    expect(keepersOf(partition, ranked, 8, null)).toEqual(ranked);
  }
});

test('the accounts partition is kept by every node, whatever CLUSTER_STANDBYS says', () => {
  const ranked = rankedNodes(NODES, 'accounts');
  for (const standbys of [0, 1, 'all'] as const) expect(keepersOf('accounts', ranked, standbys, null)).toEqual(ranked);
});

test('a writer keeps what it writes: the lease holder is a keeper even when the ranking no longer names it', () => {
  for (const partition of PARTITIONS.slice(0, 16)) {
    const ranked = rankedNodes(NODES, partition);
    const outranked = ranked.at(-1)!;
    expect(keepersOf(partition, ranked, 0, outranked)).toEqual([ranked[0]!, outranked]);
    // already a keeper: named once
    expect(keepersOf(partition, ranked, 1, ranked[1]!)).toEqual(ranked.slice(0, 2));
  }
});

test('keepers per data partition: the writer and its standbys, never more than the live nodes; all: every live node', () => {
  expect(keepersPerPartition(3, 0)).toBe(1);
  expect(keepersPerPartition(3, 1)).toBe(2);
  expect(keepersPerPartition(3, 2)).toBe(3);
  // more standbys than other nodes: every node keeps it, no more
  expect(keepersPerPartition(3, 3)).toBe(3);
  expect(keepersPerPartition(1, 1)).toBe(1);
  expect(keepersPerPartition(4, 'all')).toBe(4);
  expect(keepersPerPartition(0, 1)).toBe(0);
  // what the counted rule keeps for the same live set, partition by partition
  for (const standbys of [0, 1, 2, 'all'] as const) {
    for (const partition of PARTITIONS) expect(keepersOf(partition, rankedNodes(NODES, partition), standbys, null)).toHaveLength(keepersPerPartition(NODES.length, standbys));
  }
});
