/**
 * The placement (cluster/placement.ts): every node computes the same rankings from the same
 * live set; every node writes and keeps within one of an even share for 1 to 8 nodes, 1 to
 * 1024 partitions and any CLUSTER_STANDBYS; a node joining or leaving moves few slots besides
 * its own (measured and bounded here); a writer's heir is its standby.
 */
import { expect, test } from 'bun:test';
import { Placement, placeRankings } from '../../cluster/placement.ts';
import type { Standbys } from '../../cluster/partition-keepers.ts';

const keysOf = (partitions: number): string[] => [...Array.from({ length: partitions }, (_, index) => `p.${index}`), 'accounts'];
const nodesOf = (count: number): string[] => Array.from({ length: count }, (_, index) => `node-${String.fromCharCode(97 + index)}`);
const PARTITION_COUNTS = [1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 64, 100, 257, 1024];
const STANDBYS: Standbys[] = [0, 1, 2, 3, 5, 8, 'all'];

/** How many rank slots of each data partition are kept: the writer and its standbys, at most every node. */
const keptRanks = (nodes: number, standbys: Standbys): number => (standbys === 'all' ? nodes : Math.min(nodes, 1 + standbys));

function loads(nodes: readonly string[], keys: readonly string[], standbys: Standbys) {
  const rankings = placeRankings(nodes, keys, standbys);
  const writes = new Map(nodes.map((node) => [node, 0]));
  const keeps = new Map(nodes.map((node) => [node, 0]));
  for (const key of keys) {
    const ranked = rankings.get(key)!;
    writes.set(ranked[0]!, writes.get(ranked[0]!)! + 1);
    if (key !== 'accounts') for (const node of ranked.slice(0, keptRanks(nodes.length, standbys))) keeps.set(node, keeps.get(node)! + 1);
  }
  return { rankings, writes: [...writes.values()], keeps: [...keeps.values()] };
}

const spread = (counts: number[]): number => Math.max(...counts) - Math.min(...counts);

/** Keeper slots of the data partitions that `after` gives a node `before` did not. */
function slotsMoved(before: ReadonlyMap<string, readonly string[]>, after: ReadonlyMap<string, readonly string[]>, keys: readonly string[], ranksBefore: number, ranksAfter: number): number {
  let moved = 0;
  for (const key of keys) {
    if (key === 'accounts') continue;
    const was = before.get(key)!.slice(0, ranksBefore);
    moved += after.get(key)!.slice(0, ranksAfter).filter((node) => !was.includes(node)).length;
  }
  return moved;
}

test('every partition is ranked over every live node once, whatever order the live set is given in', () => {
  for (const nodes of [nodesOf(1), nodesOf(3), nodesOf(8)]) {
    for (const standbys of [0, 1, 'all'] as const) {
      const keys = keysOf(64);
      const rankings = placeRankings(nodes, keys, standbys);
      expect(placeRankings([...nodes].reverse(), keys, standbys)).toEqual(rankings);
      expect(placeRankings([...nodes, nodes[0]!], keys, standbys)).toEqual(rankings);
      for (const key of keys) expect([...rankings.get(key)!].sort()).toEqual(nodes);
    }
  }
  expect(placeRankings([], keysOf(4), 1).get('p.0')).toEqual([]);
  const placement = new Placement(keysOf(4), 1);
  expect(placement.writer([], 'p.0')).toBeNull();
  expect(placement.ranked(['node-a'], 'p.9')).toEqual([]);
});

test('every node writes and keeps within one of an even share: 1 to 8 nodes, 1 to 1024 partitions, standbys 0 to 8 and all', () => {
  for (let count = 1; count <= 8; count++) {
    const nodes = nodesOf(count);
    for (const partitions of PARTITION_COUNTS) {
      for (const standbys of STANDBYS) {
        const { rankings, writes, keeps } = loads(nodes, keysOf(partitions), standbys);
        const label = `${count} nodes, ${partitions} partitions, standbys ${standbys}: writes ${writes}, keeps ${keeps}`;
        expect({ label, spread: spread(writes) }).toEqual({ label, spread: Math.min(spread(writes), 1) });
        expect({ label, spread: spread(keeps) }).toEqual({ label, spread: Math.min(spread(keeps), 1) });
        expect(keeps.reduce((sum, kept) => sum + kept, 0)).toBe(partitions * keptRanks(count, standbys));
        expect(rankings.get('accounts')!.length).toBe(count);
      }
    }
  }
});

test('16 partitions with one standby over three nodes: 11, 11 and 10 kept (plain rendezvous gave 11, 13 and 8), the writers pinned', () => {
  const { rankings, writes, keeps } = loads(nodesOf(3), keysOf(16), 1);
  expect([...keeps].sort()).toEqual([10, 11, 11]);
  expect([...writes].sort()).toEqual([5, 6, 6]);
  // pinned: nodes of one version must agree, so a change here is a change of the placement every node of a cluster must make together
  expect(keysOf(16).map((key) => rankings.get(key)![0]!.slice(-1)).join('')).toBe('cbacbacabcaabcbca');
});

test('a node leaving moves its own slots and at most two shares and one slot per node more; one joining takes its share and as few more; with many partitions half as many again at most', () => {
  let worstLarge = 0;
  for (let count = 2; count <= 8; count++) {
    const nodes = nodesOf(count);
    for (const partitions of [1, 3, 8, 16, 17, 64, 257, 1024]) {
      for (const standbys of [0, 1, 2] as const) {
        const keys = keysOf(partitions);
        const ranks = keptRanks(count, standbys);
        const ranksWithout = keptRanks(count - 1, standbys);
        const all = placeRankings(nodes, keys, standbys);
        const shareWithout = Math.ceil((ranksWithout * partitions) / (count - 1));
        const shareWith = Math.ceil((ranks * partitions) / count);
        for (const gone of [nodes[0]!, nodes.at(-1)!]) {
          const without = placeRankings(nodes.filter((node) => node !== gone), keys, standbys);
          // leaving: its slots have to go somewhere (when the survivors keep as many ranks)
          const own = ranks === ranksWithout ? keys.filter((key) => key !== 'accounts' && all.get(key)!.slice(0, ranks).includes(gone)).length : 0;
          const left = slotsMoved(all, without, keys, ranks, ranksWithout);
          expect({ partitions, count, standbys, fits: left <= own + 2 * shareWithout + count }).toEqual({ partitions, count, standbys, fits: true });
          // joining (the same pair, the other way): its share has to come to it
          const taken = keys.filter((key) => key !== 'accounts' && all.get(key)!.slice(0, ranks).includes(gone)).length;
          const joined = slotsMoved(without, all, keys, ranksWithout, ranks);
          expect({ partitions, count, standbys, fits: joined <= taken + 2 * shareWith + count }).toEqual({ partitions, count, standbys, fits: true });
          if (partitions >= 257 && own > 0) worstLarge = Math.max(worstLarge, left / own, joined / taken);
        }
      }
    }
  }
  // with many partitions the bounds shift little: at most half as many slots again as must move
  expect(worstLarge).toBeGreaterThan(1);
  expect(worstLarge).toBeLessThanOrEqual(1.5);
});

test("a writer's heir is its standby, which keeps the partition already; with the holder live or none, the wanted writer", () => {
  for (const count of [2, 3, 5]) {
    const nodes = nodesOf(count);
    const placement = new Placement(keysOf(64), 1);
    for (const gone of nodes) {
      const survivors = nodes.filter((node) => node !== gone);
      for (const key of placement.keys) {
        const before = placement.ranked(nodes, key);
        if (before[0] === gone) expect(placement.heir(survivors, key, gone)).toBe(before[1]!);
        else expect(placement.heir(survivors, key, gone)).toBe(before[0]!);
        expect(placement.heir(nodes, key, before.at(-1)!)).toBe(placement.writer(nodes, key)!);
        expect(placement.heir(nodes, key, null)).toBe(placement.writer(nodes, key)!);
      }
    }
  }
});

test('another process computes the same placement', async () => {
  const nodes = nodesOf(5);
  const script = `import { placeRankings } from ${JSON.stringify(new URL('../../cluster/placement.ts', import.meta.url).pathname)};
    console.log(JSON.stringify([...placeRankings(${JSON.stringify([...nodes].reverse())}, ${JSON.stringify(keysOf(100))}, 2)]));`;
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' });
  const theirs = JSON.parse(await new Response(child.stdout).text()) as Array<[string, string[]]>;
  expect(await child.exited).toBe(0);
  expect(new Map(theirs)).toEqual(new Map([...placeRankings(nodes, keysOf(100), 2)].map(([key, ranked]) => [key, [...ranked]])));
});
