/**
 * A cluster node receiving another node's part of a read (src/http/cluster-front.ts with
 * cluster-reads.ts), over a stand-in replica: it answers for the partitions the signature
 * names, with them as the request's read scope; for a partition it does not keep it answers
 * 503 naming them, never passing the request on; a scope not signed is no scope; an internal
 * call whose body does not match its signature is refused.
 */
import { afterEach, expect, test } from 'bun:test';
import type { Engine } from '../../actors/engine.ts';
import type { App } from '../../src/app.ts';
import { ClusterFront, type ReplicaServices } from '../../src/http/cluster-front.ts';
import { CLUSTER_CALL_PATH, NOT_KEEPER_HEADER } from '../../src/http/cluster-reads.ts';
import { FORWARD_HEADER, signForward } from '../../src/http/forward-signature.ts';
import { readScopeOf, type ReadScope } from '../../src/http/read-scope.ts';
import { loadConfig } from '../../src/config.ts';
import type { ClusterNode } from '../../src/open-engine.ts';

const SECRET = 'a-cluster-secret-for-tests-0123';
const CLIENT = { address: '198.51.100.7', host: 'jobs.example', https: false };
const fronts: ClusterFront[] = [];
afterEach(async () => {
  for (const front of fronts.splice(0)) await front.stop();
});

/** A front over 4 partitions keeping `kept`; the app records the read scope of what it answered (null: none). */
async function frontKeeping(kept: number[], scopes: Array<ReadScope | null>): Promise<string> {
  const config = { ...loadConfig({ PORT: '0', HOST: '127.0.0.1', CLUSTER_PARTITIONS: '4' }), clusterSecret: SECRET };
  const front = new ClusterFront(config, () => undefined);
  fronts.push(front);
  await front.listen('keeper');
  const app = {
    server: null,
    handle: async (request: Request) => {
      scopes.push(readScopeOf(request) ?? null);
      return Response.json({ answered: true });
    },
  } as unknown as App;
  const node = {
    store: { partition: () => ({ writing: false }), lastSeq: 1 },
    replica: { following: true, appliedSeq: 1, lastKnownSeq: 1, waitApplied: async () => true },
    owners: { ownerOf: () => null, held: () => [], keepersOf: () => [], keepsHere: (key: string) => kept.map((partition) => `p.${partition}`).includes(key) },
  } as unknown as ClusterNode;
  front.replicate(app, {} as Engine, node, { live: { watchedConnectionIds: () => [] } } as unknown as ReplicaServices);
  return `http://127.0.0.1:${front.port}`;
}

function scopedRead(baseUrl: string, partitions: number[], secret = SECRET): Promise<Response> {
  const path = '/api/jobs?limit=5';
  return fetch(baseUrl + path, { headers: { [FORWARD_HEADER]: signForward(secret, 'GET', path, CLIENT, Date.now(), { partitions, partitionCount: 4, mergeNowMs: 77 }) } });
}

test('a signed part of a read is answered here for the partitions it names; one naming a partition not kept here is 503, never passed on', async () => {
  const scopes: Array<ReadScope | null> = [];
  const baseUrl = await frontKeeping([0, 2], scopes);
  expect((await scopedRead(baseUrl, [0, 2])).status).toBe(200);
  expect(scopes).toEqual([{ partitions: [0, 2], partitionCount: 4, mergeNowMs: 77 }]);
  const refused = await scopedRead(baseUrl, [2, 3]);
  expect(refused.status).toBe(503);
  expect(refused.headers.get(NOT_KEEPER_HEADER)).toBe('p.3');
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(scopes.length).toBe(1);
});

test('a scope signed with another secret is no scope, and a call whose body is not the one signed is refused', async () => {
  const scopes: Array<ReadScope | null> = [];
  const baseUrl = await frontKeeping([0, 1, 2, 3], scopes);
  // not believed: the request is an unsigned read like any other (the shards' front asks the app without a session: the 401 there)
  await scopedRead(baseUrl, [1], 'another-secret-of-the-same-length');
  expect(scopes.every((scope) => scope === null)).toBe(true);
  const signature = signForward(SECRET, 'POST', CLUSTER_CALL_PATH, CLIENT, Date.now(), { bodySha256: '0'.repeat(64) });
  const call = await fetch(baseUrl + CLUSTER_CALL_PATH, { method: 'POST', headers: { [FORWARD_HEADER]: signature }, body: JSON.stringify({ what: 'locateJobs', ids: ['x'], connectionIds: [] }) });
  expect(call.status).toBe(401);
});
