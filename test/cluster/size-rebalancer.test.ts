/**
 * The coordinating side of placement by size (cluster/size-rebalancer.ts) over a stand-in
 * bucket: only the live node with the smallest id writes; nothing is written while a member
 * publishes no weights (said once), while a keeper has not taken its partition up, or while a
 * lease is not where the placement wants it; once settled, one move is written as a map the
 * nodes can read, by compare-and-set on the revision in force, and no second move is decided
 * before the watch has put the first in force.
 */
import { afterEach, expect, test } from 'bun:test';
import type { KV } from '@nats-io/kv';
import type { Member } from '../../cluster/membership.ts';
import { decodePlacementMap, PLACEMENT_MAP_KEY } from '../../cluster/placement-map.ts';
import { Placement } from '../../cluster/placement.ts';
import { SizeRebalancer } from '../../cluster/size-rebalancer.ts';

const keys = ['p.0', 'p.1', 'p.2', 'p.3', 'p.4', 'p.5', 'accounts'];
const nodes = ['node-a', 'node-b', 'node-c'];
const INTERVAL_MS = 20;
let running: SizeRebalancer[] = [];
afterEach(() => {
  for (const rebalancer of running) rebalancer.stop();
  running = [];
});

/** Members that keep what `placement` gives them, with `weights` per partition, every lease held by its wanted writer. */
function settledCluster(placement: Placement, weights: Record<string, number>) {
  const members: Member[] = nodes.map((node) => {
    const keeps = keys.filter((key) => key === 'accounts' || placement.ranked(nodes, key).slice(0, 2).includes(node));
    return { node, url: `http://${node}`, keeps, weights: Object.fromEntries(keeps.filter((key) => key !== 'accounts').map((key) => [key, weights[key] ?? 0])) };
  });
  const ownerOf = (key: string) => ({ node: placement.writer(nodes, key)!, url: '' });
  return { members, ownerOf };
}

function standIn() {
  const writes: Array<{ op: 'create' | 'update'; value: string; revision?: number }> = [];
  const kv = {
    create: async (key: string, value: string) => {
      expect(key).toBe(PLACEMENT_MAP_KEY);
      writes.push({ op: 'create', value });
      return writes.length;
    },
    update: async (key: string, value: string, revision: number) => {
      expect(key).toBe(PLACEMENT_MAP_KEY);
      writes.push({ op: 'update', value, revision });
      return writes.length + 10;
    },
  } as unknown as KV;
  return { kv, writes };
}

function start(node: string, placement: Placement, kv: KV, members: () => Member[], ownerOf: (key: string) => { node: string; url: string }, lines: string[]) {
  const rebalancer = new SizeRebalancer({ kv, node, placement, intervalMs: INTERVAL_MS, members, ownerOf, log: (line) => lines.push(line) });
  running.push(rebalancer);
  return rebalancer;
}

/** One partition far heavier than the rest on the node that writes it. */
function lumpy(placement: Placement): Record<string, number> {
  const heavy = keys.find((key) => placement.writer(nodes, key) === 'node-b')!;
  return Object.fromEntries(keys.filter((key) => key !== 'accounts').map((key) => [key, key === heavy ? 1000 : 10 + key.length]));
}

test('only the smallest live id coordinates; settled and lumpy, it writes one move as a map the nodes read', async () => {
  const placement = new Placement(keys, 1);
  const { members, ownerOf } = settledCluster(placement, lumpy(placement));
  const { kv, writes } = standIn();
  const lines: string[] = [];
  start('node-b', placement, kv, () => members, ownerOf, lines);
  start('node-c', placement, kv, () => members, ownerOf, lines);
  await Bun.sleep(INTERVAL_MS * 5);
  expect(writes).toEqual([]);
  start('node-a', placement, kv, () => members, ownerOf, lines);
  await Bun.sleep(INTERVAL_MS * 5);
  // one write: the next waits until the watch puts it in force
  expect(writes.length).toBe(1);
  expect(writes[0]!.op).toBe('create');
  const map = decodePlacementMap(writes[0]!.value, keys, '1');
  if ('unusable' in map) throw new Error(map.unusable);
  expect(map).toMatchObject({ nodes, writtenBy: 'node-a', moves: 1 });
  expect(lines.filter((line) => /^placement by size: (moved|swapped) p\.\d \(\d+ jobs, (writer|standby 1)\) from node-\w to node-\w.*-> .*\(move 1 over 3 live nodes\)$/.test(line)).length).toBe(1);
  // in force (as the watch would), the next move is a compare-and-set on that revision
  placement.useMap(map, 1);
  await Bun.sleep(INTERVAL_MS * 5);
  for (const write of writes.slice(1)) expect(write).toMatchObject({ op: 'update', revision: 1 });
});

test('nothing is written while a member publishes no weights (said once), a keeper has not taken its partition up, or a lease is elsewhere', async () => {
  const placement = new Placement(keys, 1);
  const weights = lumpy(placement);
  const { members, ownerOf } = settledCluster(placement, weights);
  const { kv, writes } = standIn();
  const lines: string[] = [];
  const silent = members.map((member) => (member.node === 'node-c' ? { node: member.node, url: member.url, keeps: member.keeps } : member));
  const rebalancer = start('node-a', placement, kv, () => silent, ownerOf, lines);
  await Bun.sleep(INTERVAL_MS * 5);
  rebalancer.stop();
  expect(writes).toEqual([]);
  expect(lines).toEqual(['placement by size: not balancing while node node-c publishes no weights (an older version places by count)']);

  const notTakenUp = members.map((member) => (member.node === 'node-b' ? { ...member, keeps: member.keeps!.slice(1) } : member));
  const second = start('node-a', placement, kv, () => notTakenUp, ownerOf, lines);
  await Bun.sleep(INTERVAL_MS * 5);
  second.stop();
  expect(writes).toEqual([]);

  const leaseElsewhere = (key: string) => (key === 'p.0' ? { node: 'node-x', url: '' } : ownerOf(key));
  start('node-a', placement, kv, () => members, leaseElsewhere, lines);
  await Bun.sleep(INTERVAL_MS * 5);
  expect(writes).toEqual([]);
});

test('inside the band nothing is written', async () => {
  const placement = new Placement(keys, 1);
  const { members, ownerOf } = settledCluster(placement, Object.fromEntries(keys.map((key) => [key, 100])));
  const { kv, writes } = standIn();
  start('node-a', placement, kv, () => members, ownerOf, []);
  await Bun.sleep(INTERVAL_MS * 5);
  expect(writes).toEqual([]);
});
