/**
 * What a node keeps as the live set and the leases change (cluster/partition-keeping.ts),
 * over a stand-in store and ownership (the take-up itself against real NATS is in
 * test/cluster/partial-replication.test.ts): a node joining takes up its share, one whose
 * partitions it no longer should keep lets them go only after a lease, never while it
 * writes them; a failed take-up is retried after a lease; a writer's take-up joins the one
 * under way.
 */
import { expect, test } from 'bun:test';
import type { Member } from '../../cluster/membership.ts';
import { keepersOf } from '../../cluster/partition-keepers.ts';
import { PartitionKeeping, type KeptStore, type OwnershipView } from '../../cluster/partition-keeping.ts';
import type { Keeping, PartitionPhase, TakeUpHandler, TakenUp } from '../../cluster/partition-log.ts';
import type { PartitionPhase as LeasePhase } from '../../cluster/partition-ownership.ts';
import { Placement } from '../../cluster/placement.ts';

const LEASE_MS = 200;
const KEYS = [...Array.from({ length: 12 }, (_, index) => `p.${index}`), 'accounts'];
const PLACEMENT = new Placement(KEYS, 1);

class StandInStore implements KeptStore {
  readonly keys = KEYS;
  readonly states = new Map<string, { keeping: Keeping; phase: PartitionPhase }>();
  readonly takenUp: string[] = [];
  readonly letGoOf: string[] = [];
  /** A take-up waits for this (a test resolves or rejects it). */
  gate: Promise<void> = Promise.resolve();

  constructor(kept: (key: string) => boolean) {
    for (const key of KEYS) this.states.set(key, { keeping: key === 'accounts' || kept(key) ? 'kept' : 'not kept', phase: 'following' });
  }

  partition(key: string) {
    return this.states.get(key)!;
  }

  keeping(): string[] {
    return KEYS.filter((key) => this.states.get(key)!.keeping === 'kept');
  }

  async takeUp(key: string, handler: TakeUpHandler): Promise<TakenUp> {
    void handler;
    const state = this.states.get(key)!;
    state.keeping = 'taking up';
    try {
      await this.gate;
    } catch (error) {
      state.keeping = 'not kept';
      throw error;
    }
    state.keeping = 'kept';
    this.takenUp.push(key);
    return { snapshotSeq: 0, records: 0, heldBack: 0, durationMs: 0 };
  }

  letGo(key: string): void {
    this.states.get(key)!.keeping = 'not kept';
    this.letGoOf.push(key);
  }
}

class StandInOwnership implements OwnershipView {
  live: string[];
  readonly holders = new Map<string, string>();
  readonly phases = new Map<string, LeasePhase>();
  constructor(live: string[]) {
    this.live = live;
  }
  members(): Member[] {
    return this.live.map((node) => ({ node, url: `http://${node}` }));
  }
  ownerOf(key: string) {
    const node = this.holders.get(key);
    return node === undefined ? null : { node, url: `http://${node}` };
  }
  phaseOf(key: string): LeasePhase | null {
    return this.phases.get(key) ?? null;
  }
}

function keepsByRule(node: string, live: string[]): (key: string) => boolean {
  return (key) => keepersOf(key, PLACEMENT.ranked(live, key), PLACEMENT.standbys, null).includes(node);
}

function keepingOf(node: string, store: StandInStore, lines: string[] = []): PartitionKeeping {
  let dropped = 0;
  return new PartitionKeeping({
    store,
    node,
    placement: PLACEMENT,
    leaseMs: LEASE_MS,
    log: (line) => lines.push(line),
    engine: {
      takeUpHandler: () => ({ snapshotChunk: () => undefined, snapshotRestored: () => undefined, record: () => undefined }),
      dropNotHeld: () => ({ connections: dropped++, jobs: 0, auditEntries: 0 }),
      heldOf: () => ({ connections: 0, jobs: 0 }),
      jobsByPartition: () => new Map(),
    },
  });
}

const THREE = ['node-a', 'node-b', 'node-c'];

test('a node joining takes up the partitions the rule now gives it, and keeps what it kept', async () => {
  const store = new StandInStore(keepsByRule('node-d', ['node-d'])); // before it saw the others: everything
  for (const key of KEYS) store.states.get(key)!.keeping = key === 'accounts' ? 'kept' : 'not kept';
  const ownership = new StandInOwnership([...THREE, 'node-d']);
  const lines: string[] = [];
  const keeping = keepingOf('node-d', store, lines);
  keeping.attach(ownership);
  await Bun.sleep(0);
  const expected = KEYS.filter((key) => key !== 'accounts' && keepsByRule('node-d', ownership.live)(key));
  expect(expected.length).toBeGreaterThan(0);
  expect(store.takenUp.sort()).toEqual(expected.sort());
  expect(keeping.kept().sort()).toEqual([...expected, 'accounts'].sort());
  expect(lines.some((line) => /^taking up p\.\d+: kept by .*node-d.* among 4 live nodes$/.test(line))).toBe(true);
  expect(lines.filter((line) => line.startsWith('took up ')).length).toBe(expected.length);
  // keepers as the owners tell the front: the rule's nodes, the wanted writer first
  for (const key of expected) expect(keeping.keepersOf(key).map((member) => member.node)).toEqual(PLACEMENT.ranked(ownership.live, key).slice(0, 2));
});

test('a partition no longer wanted here is let go only after a lease of being unwanted, and not if it is wanted again meanwhile', async () => {
  const store = new StandInStore(keepsByRule('node-a', THREE));
  const ownership = new StandInOwnership(THREE);
  const lines: string[] = [];
  const keeping = keepingOf('node-a', store, lines);
  keeping.attach(ownership);
  const keptBefore = keeping.kept();
  // node-d joins: some of node-a's partitions pass to it
  ownership.live = [...THREE, 'node-d'];
  keeping.look();
  const unwanted = keptBefore.filter((key) => key !== 'accounts' && !keepsByRule('node-a', ownership.live)(key));
  expect(unwanted.length).toBeGreaterThan(0);
  expect(store.letGoOf).toEqual([]);
  await Bun.sleep(LEASE_MS / 2);
  keeping.look();
  expect(store.letGoOf).toEqual([]);
  // node-d blinks out: wanted again; when it comes back the lease is counted anew
  ownership.live = THREE;
  keeping.look();
  ownership.live = [...THREE, 'node-d'];
  await Bun.sleep(LEASE_MS / 2 + 5);
  keeping.look();
  expect(store.letGoOf).toEqual([]);
  await Bun.sleep(LEASE_MS);
  keeping.look();
  expect(store.letGoOf.sort()).toEqual(unwanted.sort());
  expect(lines.filter((line) => line.startsWith('let go of ')).length).toBe(unwanted.length);
  expect(keeping.kept()).not.toContain(unwanted[0]);
});

test('a partition this node writes, or whose lease is moving here or away, is never let go; the lease holder keeps it', async () => {
  const store = new StandInStore(() => true);
  const ownership = new StandInOwnership(THREE);
  const keeping = keepingOf('node-a', store);
  const notMine = KEYS.filter((key) => key !== 'accounts' && !keepsByRule('node-a', THREE)(key));
  expect(notMine.length).toBeGreaterThan(2);
  const [written, handingOver, holding] = notMine;
  store.states.get(written!)!.phase = 'writing';
  ownership.phases.set(handingOver!, 'handing over');
  ownership.holders.set(holding!, 'node-a');
  keeping.attach(ownership);
  await Bun.sleep(LEASE_MS + 5);
  keeping.look();
  expect(store.letGoOf.sort()).toEqual(notMine.slice(3).sort());
  expect(keeping.kept()).toEqual(expect.arrayContaining([written!, handingOver!, holding!]));
});

test("a failed take-up drops what it loaded and is tried again after a lease, not in a loop; a writer's take-up joins the one under way", async () => {
  const store = new StandInStore(() => false);
  const ownership = new StandInOwnership(['node-a']);
  const lines: string[] = [];
  const keeping = keepingOf('node-a', store, lines);
  let fail!: (error: Error) => void;
  store.gate = new Promise<void>((_, reject) => {
    fail = reject;
  });
  keeping.attach(ownership); // alone: it should keep everything
  const joined = keeping.takeUp('p.0');
  expect(store.states.get('p.0')!.keeping).toBe('taking up');
  expect(keeping.keepsHere('p.0')).toBe(false);
  fail(new Error('snapshot object unreadable'));
  await expect(joined).rejects.toThrow('snapshot object unreadable');
  await Bun.sleep(0);
  expect(lines.filter((line) => line.startsWith('taking up p.0 failed (snapshot object unreadable); dropped what it loaded')).length).toBe(1);
  store.gate = Promise.resolve();
  keeping.look();
  await Bun.sleep(0);
  expect(store.takenUp).toEqual([]);
  await Bun.sleep(LEASE_MS + 5);
  keeping.look();
  await Bun.sleep(0);
  expect(store.takenUp.sort()).toEqual(KEYS.filter((key) => key !== 'accounts').sort());
  // kept: a writer's take-up resolves at once
  await keeping.takeUp('p.0');
  expect(keeping.keepsHere('p.0')).toBe(true);
});

test('after stop() nothing is taken up or let go', () => {
  const store = new StandInStore(() => false);
  const keeping = keepingOf('node-a', store);
  keeping.stop();
  keeping.attach(new StandInOwnership(['node-a']));
  expect(store.takenUp).toEqual([]);
  expect([...store.states.values()].filter((state) => state.keeping === 'taking up')).toEqual([]);
});
