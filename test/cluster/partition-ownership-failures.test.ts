/**
 * Partition ownership when a hook or another node misbehaves, on a real 3-server NATS
 * cluster: an `onTaken` that fails releases the lease and is tried again after a lease,
 * not in a loop; a lease another node overwrote calls `onLost` and, once that writer stays
 * silent for a lease, is taken back with a higher epoch; a `release` hook that fails still
 * releases the lease, so the wanted node takes over; a writer hands a partition over only
 * once the wanted node says it keeps it; beside a node of the older version (plain rendezvous,
 * no keeps in its key) no partition stays unwritten; a lease value that cannot be read is
 * reported once and does not stop the other partitions.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { leaseBucketSettings, partitionKey } from '../../cluster/nats-cluster.ts';
import { PartitionOwnership } from '../../cluster/partition-ownership.ts';
import { Placement } from '../../cluster/placement.ts';
import { rankedNodes } from '../../cluster/rendezvous.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';

const LEASE_MS = 1_500;
let nats: NatsTestCluster;
let nc: NatsConnection;
let leases: KV;
let nodes: KV;
const started: PartitionOwnership[] = [];

beforeAll(async () => {
  nats = await startNatsCluster();
  nc = await connect({ servers: nats.url.split(','), reconnectTimeWait: 100 });
  const kvm = new Kvm(jetstream(nc));
  leases = await kvm.create('failure_leases', leaseBucketSettings(3));
  nodes = await kvm.create('failure_nodes', { replicas: 3, history: 1, ttl: 60 * 60 * 1000 });
});
// each test's members leave, so the next test's keys are wanted among its own members only
afterEach(async () => {
  await Promise.all(started.splice(0).map((ownership) => ownership.stop().catch(() => undefined)));
});
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

interface Hooks {
  onTaken?: (partition: string, epoch: number) => Promise<void>;
  release?: (partition: string) => Promise<void>;
  onLost?: (partition: string, error: Error) => void;
  /** what the member says it keeps; every partition it is given when not named, nothing said when named undefined (an older version) */
  keeps?: () => string[];
  /** who should write what; the balanced placement over `partitions` when not given */
  placement?: Placement;
}

async function member(node: string, partitions: string[], hooks: Hooks, lines: string[]): Promise<PartitionOwnership> {
  const ownership = await PartitionOwnership.start({
    leases,
    nodes,
    node,
    url: `http://${node}.test`,
    leaseMs: LEASE_MS,
    placement: hooks.placement ?? new Placement(partitions, 0),
    log: (line) => lines.push(line),
    onTaken: hooks.onTaken ?? (async () => undefined),
    release: hooks.release ?? (async () => undefined),
    onLost: hooks.onLost ?? (() => undefined),
    keeps: 'keeps' in hooks ? hooks.keeps : () => partitions,
  });
  started.push(ownership);
  return ownership;
}

async function until(what: string, ready: () => boolean | Promise<boolean>, lines: string[], withinMs = 20_000): Promise<number> {
  const startedAt = performance.now();
  while (!(await ready())) {
    if (performance.now() - startedAt > withinMs) throw new Error(`${what}: not within ${withinMs} ms\n${lines.join('\n')}`);
    await Bun.sleep(20);
  }
  return performance.now() - startedAt;
}

async function leaseValue(key: string): Promise<{ node: string; epoch: number; released?: boolean }> {
  return (await leases.get(key))!.json();
}

test('an onTaken that fails releases the lease and is tried again after a lease, not in a loop', async () => {
  const lines: string[] = [];
  const attempts: number[] = [];
  const key = 'x.0';
  const solo = await member('solo-a', [key], {
    onTaken: async () => {
      attempts.push(performance.now());
      if (attempts.length === 1) throw new Error('catching up failed');
    },
  }, lines);
  await until('held after the retry', () => solo.phaseOf(key) === 'held', lines);
  expect(attempts).toHaveLength(2);
  expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(LEASE_MS);
  expect(lines).toContain(`taking over ${key} failed (catching up failed); releasing its lease, trying again in ${LEASE_MS} ms if still wanted here`);
  expect(await leaseValue(key)).toMatchObject({ node: 'solo-a', epoch: 2 });
  expect(lines.some((line) => line === `acquired the lease ${key} (epoch 2) released by solo-a`)).toBe(true);
}, 30_000);

test('a lease another node overwrote calls onLost at once and is taken back, one epoch higher, after that writer stays silent for a lease', async () => {
  const lines: string[] = [];
  const lost: string[] = [];
  const key = 'y.0';
  const solo = await member('solo-b', [key], { onLost: (partition, error) => lost.push(`${partition}: ${error.message}`) }, lines);
  await until('held', () => solo.phaseOf(key) === 'held', lines);
  const { epoch } = await leaseValue(key);
  await leases.put(key, JSON.stringify({ node: 'intruder', epoch: epoch + 1, url: '' }));
  await until('lost', () => lost.length > 0, lines);
  expect(lost).toEqual([expect.stringMatching(new RegExp(`^${key}: lost the lease ${key} \\(epoch ${epoch}\\): another node took it`))]);
  expect(solo.phaseOf(key)).toBeNull();
  expect(solo.ownerOf(key)?.node).toBe('intruder');
  const lostAt = performance.now();
  await until('taken back', () => solo.phaseOf(key) === 'held', lines);
  expect(performance.now() - lostAt).toBeGreaterThanOrEqual(LEASE_MS * 0.5);
  expect(await leaseValue(key)).toMatchObject({ node: 'solo-b', epoch: epoch + 2 });
  expect(lines.some((line) => line.startsWith(`took over the lease ${key} (epoch ${epoch + 2}) from intruder`))).toBe(true);
}, 30_000);

test('a release hook that fails still releases the lease, and the wanted node takes it', async () => {
  const lines: string[] = [];
  // a key the second node weighs more for, among these two
  const key = Array.from({ length: 64 }, (_, index) => `z.${partitionKey(index)}`).find((candidate) => new Placement([candidate], 0).writer(['solo-c', 'solo-d'], candidate) === 'solo-d')!;
  const first = await member('solo-c', [key], { release: async () => Promise.reject(new Error('flush failed')) }, lines);
  await until('held by the first', () => first.phaseOf(key) === 'held', lines);
  const second = await member('solo-d', [key], {}, lines);
  await until('held by the second', () => second.phaseOf(key) === 'held', lines);
  expect(first.phaseOf(key)).toBeNull();
  expect(lines).toContain(`the release of ${key} failed (flush failed); releasing its lease anyway`);
  expect(lines.filter((line) => line.includes(key))).toContainEqual(expect.stringMatching(new RegExp(`^acquired the lease ${key.replaceAll('.', '\\.')} \\(epoch 2\\) released by solo-c`)));
}, 30_000);

test('a writer hands a partition over only once the wanted node says (its membership key) that it keeps it', async () => {
  const lines: string[] = [];
  const key = Array.from({ length: 64 }, (_, index) => `y.${partitionKey(index)}`).find((candidate) => new Placement([candidate], 0).writer(['solo-g', 'solo-h'], candidate) === 'solo-h')!;
  const holder = await member('solo-g', [key], { keeps: () => [key] }, lines);
  await until('held by the first', () => holder.phaseOf(key) === 'held', lines);
  let keptByWanted: string[] = [];
  const wanted = await member('solo-h', [key], { keeps: () => keptByWanted }, lines);
  // wanted there, but it keeps nothing yet: the holder goes on writing through several looks and refreshes
  await Bun.sleep(LEASE_MS * 1.5);
  expect(holder.phaseOf(key)).toBe('held');
  expect(wanted.phaseOf(key)).toBeNull();
  keptByWanted = [key];
  wanted.announceKeeps();
  const ms = await until('handed over', () => wanted.phaseOf(key) === 'held', lines, LEASE_MS * 2);
  expect(holder.phaseOf(key)).toBeNull();
  expect(lines).toContainEqual(`handing ${key} over (epoch 1): wanted by solo-h among 2 live nodes`);
  console.log(`handed over ${Math.round(ms)} ms after the wanted node said it keeps the partition`);
}, 30_000);

/** What a node of the version before the balanced placement wants: plain rendezvous over the live nodes (and it says nothing of what it keeps). */
function rendezvousOnly(keys: string[]): Placement {
  const writer = (live: Iterable<string>, key: string) => rankedNodes(live, key)[0] ?? null;
  return { keys, standbys: 0, ranked: rankedNodes, writer, heir: (live: Iterable<string>, key: string) => writer(live, key) } as unknown as Placement;
}

test('beside a node of the older version, a partition the placement gives it but plain rendezvous does not is written: taken after two leases, never handed to it', async () => {
  const olderLines: string[] = [];
  const newerLines: string[] = [];
  const keys = Array.from({ length: 16 }, (_, index) => `m.${partitionKey(index)}`);
  const placement = new Placement(keys, 0);
  // two node names and a key the new rule gives the older node while the older node's rule gives it the newer one
  const pairs = Array.from({ length: 32 }, (_, n) => [`mix-old-${n}`, `mix-new-${n}`] as const);
  const [older, newer, key] = pairs
    .map(([old, fresh]) => [old, fresh, keys.find((candidate) => placement.writer([old, fresh], candidate) === old && rankedNodes([old, fresh], candidate)[0] === fresh)] as const)
    .find(([, , found]) => found !== undefined)! as readonly [string, string, string];
  const olderNode = await member(older, keys, { placement: rendezvousOnly(keys), keeps: undefined }, olderLines);
  const newerNode = await member(newer, keys, { placement, keeps: () => keys }, newerLines);
  const ms = await until('taken by the node plain rendezvous names', () => newerNode.phaseOf(key) === 'held', [...olderLines, ...newerLines], LEASE_MS * 6);
  expect(ms).toBeGreaterThanOrEqual(LEASE_MS * 2 - 100);
  expect(newerLines.some((line) => line.includes(key) && line.includes(`free for two leases, not taken by ${older}, named here by plain rendezvous among 2 live nodes`))).toBe(true);
  // held on: the placement wants the older node, which would not take it if released
  await Bun.sleep(LEASE_MS * 2);
  expect(newerNode.phaseOf(key)).toBe('held');
  expect(olderNode.phaseOf(key)).toBeNull();
  expect(newerLines.filter((line) => line.startsWith(`handing ${key} over`))).toEqual([]);
  // every key has a writer
  for (const each of keys) expect(newerNode.phaseOf(each) === 'held' || olderNode.phaseOf(each) === 'held').toBe(true);
}, 30_000);

test('a lease value that cannot be read is reported once and leaves the other partitions alone', async () => {
  const lines: string[] = [];
  await leases.put('w.bad', JSON.stringify({ owner: 'someone' }));
  const solo = await member('solo-e', ['w.bad', 'w.good'], {}, lines);
  await until('the readable one held', () => solo.phaseOf('w.good') === 'held', lines);
  await Bun.sleep(LEASE_MS / 2); // a few more looks
  expect(solo.phaseOf('w.bad')).toBeNull();
  expect(solo.ownerOf('w.bad')).toBeNull();
  expect(lines.filter((line) => line.startsWith('cannot judge the lease'))).toEqual(['cannot judge the lease w.bad: lease w.bad holds {"owner":"someone"}, not { node, epoch }']);
}, 30_000);
