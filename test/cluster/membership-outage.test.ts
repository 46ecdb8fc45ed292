/**
 * A node's silence counts as death only while the observer itself could have heard it
 * (Membership.reachableSinceMs): after an outage of the observer's own (a NATS election,
 * a lost connection), every key has looked unchanged for as long as it lasted, and the
 * nodes it declared gone would be healthy ones whose next refresh is on its way.
 * Two members on a real 3-server NATS cluster; a member's outage is its writes to the
 * bucket failing (its refreshes), as they do while NATS does not answer.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Membership } from '../../cluster/membership.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';

const LEASE_MS = 1_000;
let nats: NatsTestCluster;
let nc: NatsConnection;
let kv: KV;
const joined: Membership[] = [];

beforeAll(async () => {
  nats = await startNatsCluster();
  nc = await connect({ servers: nats.url.split(',') });
  kv = await new Kvm(jetstream(nc)).create('membership_outage_test', { replicas: 3, history: 1 });
});
afterAll(async () => {
  await Promise.all(joined.map((member) => member.leave().catch(() => undefined)));
  await nc?.close();
  await nats?.stop();
});

/** A member whose writes fail while `down()` says so. */
async function member(node: string, down: () => boolean): Promise<Membership> {
  const cut: KV = Object.create(kv, {
    put: { value: (key: string, value: string) => (down() ? Promise.reject(new Error('TIMEOUT')) : kv.put(key, value)) },
  });
  const joinedMember = await Membership.join({ kv: cut, node, url: `http://${node}.test`, leaseMs: LEASE_MS, log: () => undefined });
  joined.push(joinedMember);
  return joinedMember;
}

async function until(condition: () => boolean, withinMs: number, what: string): Promise<void> {
  for (const deadline = Date.now() + withinMs; !condition(); ) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await Bun.sleep(10);
  }
}

test('a node that died during the observer\'s own outage is declared gone a whole lease after the observer is back, not at once', async () => {
  let observerDown = false;
  let otherDead = false;
  const observer = await member('observer', () => observerDown);
  await member('other', () => otherDead);
  const liveNodes = (): string[] => observer.live().map((each) => each.node);
  await until(() => liveNodes().includes('other'), 10_000, 'the other member in view');

  // an outage of the observer's own, during which the other member dies
  observerDown = true;
  otherDead = true;
  await until(() => performance.now() - observer.reachableSinceMs < 1, 5_000, 'the observer noticing its outage');
  await Bun.sleep(2 * LEASE_MS);
  expect(liveNodes()).toContain('other'); // nothing is judged while the observer hears nothing

  const outageEndedMs = performance.now();
  observerDown = false;
  // while its refreshes fail the answer is "now"; once one got through it stays put
  await until(() => observer.reachableSinceMs >= outageEndedMs && performance.now() - observer.reachableSinceMs > 50, 10_000, 'the observer reaching NATS again');
  const backSinceMs = observer.reachableSinceMs;
  expect(liveNodes()).toContain('other'); // its key has been silent for over two leases, but not while the observer could hear it

  await until(() => !liveNodes().includes('other'), 10_000, 'the dead member declared gone');
  expect(performance.now() - backSinceMs).toBeGreaterThanOrEqual(LEASE_MS);
});
