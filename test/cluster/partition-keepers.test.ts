/**
 * Who keeps a partition (cluster/partition-keepers.ts): the first 1 + CLUSTER_STANDBYS nodes
 * of its ranking, plus the lease's holder; the accounts and CLUSTER_STANDBYS=all every node.
 * Pure, so every node computes the same keepers from the same live set.
 */
import { expect, test } from 'bun:test';
import { keepersOf } from '../../cluster/partition-keepers.ts';
import { rankedNodes } from '../../cluster/rendezvous.ts';

const NODES = ['node-a', 'node-b', 'node-c'];
const PARTITIONS = Array.from({ length: 64 }, (_, index) => `p.${index}`);

function keptBy(nodes: readonly string[], standbys: number | 'all'): Map<string, number> {
  const counts = new Map<string, number>(nodes.map((node) => [node, 0]));
  for (const partition of PARTITIONS) for (const node of keepersOf(partition, rankedNodes(nodes, partition), standbys, null)) counts.set(node, counts.get(node)! + 1);
  return counts;
}

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

test('each node keeps about (1 + standbys) / N of the partitions: 64 over 3 nodes, each partition kept that many times', () => {
  for (const standbys of [0, 1] as const) {
    const counts = keptBy(NODES, standbys);
    expect([...counts.values()].reduce((sum, count) => sum + count, 0)).toBe(PARTITIONS.length * (1 + standbys));
    for (const count of counts.values()) expect(Math.abs(count - (PARTITIONS.length * (1 + standbys)) / 3)).toBeLessThan(12);
  }
  expect([...keptBy(NODES, 'all').values()]).toEqual([64, 64, 64]);
});

test('a node joining becomes a keeper of its share and only those partitions change keepers; a node leaving is replaced by the next in rank', () => {
  for (const standbys of [0, 1] as const) {
    const joined = [...NODES, 'node-d'];
    for (const partition of PARTITIONS) {
      const before = keepersOf(partition, rankedNodes(NODES, partition), standbys, null);
      const after = keepersOf(partition, rankedNodes(joined, partition), standbys, null);
      if (after.includes('node-d')) {
        // node-d took one place; the node it pushed out is the last of before
        expect(after.filter((node) => node !== 'node-d')).toEqual(before.slice(0, before.length - 1));
      } else {
        expect(after).toEqual(before);
      }
    }
    // leaving: the keepers of node-a's partitions are the others in rank; nobody else's change
    const left = NODES.filter((node) => node !== 'node-a');
    for (const partition of PARTITIONS) {
      const before = keepersOf(partition, rankedNodes(NODES, partition), standbys, null);
      const after = keepersOf(partition, rankedNodes(left, partition), standbys, null);
      if (!before.includes('node-a')) expect(after).toEqual(before);
      else expect(after.slice(0, before.length - 1)).toEqual(before.filter((node) => node !== 'node-a'));
    }
  }
});
