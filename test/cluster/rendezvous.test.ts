/**
 * Rendezvous hashing: pure, so every process computes the same wanted owner; a joining
 * node takes about 1/N of the partitions and only those move; a leaving node's partitions
 * spread over all the others and nothing else moves.
 */
import { expect, test } from 'bun:test';
import { rankedNodes, rendezvousWeight, wantedAssignment, wantedOwner } from '../../cluster/rendezvous.ts';

const PARTITIONS = Array.from({ length: 1_000 }, (_, index) => `p.${index}`);
const NODES = ['node-a', 'node-b', 'node-c'];

function countsOf(assignment: Map<string, string | null>): Map<string | null, number> {
  const counts = new Map<string | null, number>();
  for (const owner of assignment.values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return counts;
}

test('weights are pinned values (the same in every process and version), different per node and per partition', () => {
  expect(rendezvousWeight('node-a', 'p.0')).toBe(rendezvousWeight('node-a', 'p.0'));
  expect([rendezvousWeight('node-a', 'p.0'), rendezvousWeight('node-b', 'p.0'), rendezvousWeight('node-a', 'accounts')]).toEqual([363012759, 2077021419, 2201128750]);
  // the separator keeps ('ab', 'c') and ('a', 'bc') apart
  expect(rendezvousWeight('ab', 'c')).not.toBe(rendezvousWeight('a', 'bc'));
});

test('the wanted owner is the node of highest weight, whatever the order nodes are listed in; none without nodes', () => {
  for (const partition of PARTITIONS.slice(0, 50)) {
    const heaviest = [...NODES].sort((a, b) => rendezvousWeight(b, partition) - rendezvousWeight(a, partition))[0];
    expect(wantedOwner(NODES, partition)).toBe(heaviest!);
    expect(wantedOwner([...NODES].reverse(), partition)).toBe(heaviest!);
  }
  expect(wantedOwner([], 'p.0')).toBeNull();
});

test('nodes are ranked by weight, the wanted owner first, whatever the order they are listed in (writer then standbys)', () => {
  for (const partition of PARTITIONS.slice(0, 50)) {
    const ranked = rankedNodes(NODES, partition);
    expect(ranked[0]).toBe(wantedOwner(NODES, partition)!);
    expect(rankedNodes([...NODES].reverse(), partition)).toEqual(ranked);
    const weights = ranked.map((node) => rendezvousWeight(node, partition));
    expect(weights).toEqual([...weights].sort((a, b) => b - a));
    // the standby is the node that becomes the wanted owner when the writer leaves
    expect(wantedOwner(ranked.slice(1), partition)).toBe(ranked[1]!);
  }
  expect(rankedNodes([], 'p.0')).toEqual([]);
});

test('partitions spread evenly over the nodes (1,000 over 3, each within 15% of a third)', () => {
  const counts = countsOf(wantedAssignment(NODES, PARTITIONS));
  expect([...counts.keys()].sort()).toEqual(NODES);
  for (const count of counts.values()) expect(Math.abs(count - 1_000 / 3)).toBeLessThan(50);
});

test('a joining node takes about 1/N of the partitions, and only the ones it takes move', () => {
  const before = wantedAssignment(NODES, PARTITIONS);
  const after = wantedAssignment([...NODES, 'node-d'], PARTITIONS);
  const moved = PARTITIONS.filter((partition) => before.get(partition) !== after.get(partition));
  for (const partition of moved) expect(after.get(partition)).toBe('node-d');
  expect(Math.abs(moved.length - 250)).toBeLessThan(50);
});

test("a leaving node's partitions spread over every other node, and nothing else moves", () => {
  const four = [...NODES, 'node-d'];
  const before = wantedAssignment(four, PARTITIONS);
  const after = wantedAssignment(NODES, PARTITIONS);
  const receivers = new Map<string, number>();
  for (const partition of PARTITIONS) {
    if (before.get(partition) === 'node-d') {
      const receiver = after.get(partition)!;
      receivers.set(receiver, (receivers.get(receiver) ?? 0) + 1);
    } else {
      expect(after.get(partition)).toBe(before.get(partition)!);
    }
  }
  expect([...receivers.keys()].sort()).toEqual(NODES);
  for (const count of receivers.values()) expect(count).toBeGreaterThan(50); // about 250 / 3 each
});

test('another process computes the same assignment', async () => {
  const script = `import { wantedAssignment } from ${JSON.stringify(new URL('../../cluster/rendezvous.ts', import.meta.url).pathname)};
    console.log(JSON.stringify([...wantedAssignment(${JSON.stringify(NODES)}, ${JSON.stringify(PARTITIONS.slice(0, 100))})]));`;
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' });
  const output = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  expect(JSON.parse(output)).toEqual([...wantedAssignment(NODES, PARTITIONS.slice(0, 100))]);
});
