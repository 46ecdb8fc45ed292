/**
 * A write that reaches a node while its partition's writer is not known yet (right after
 * nodes start, or during a handover) waits for a moment instead of handing the client a 503
 * to retry: the node forwarded a write because it just took the lease answers it once it
 * writes; a node that sees the partition moving forwards it once the new writer holds the
 * lease. The wait is bounded, and a forward for a partition another node writes is still
 * refused at once (never forwarded again). The cluster front runs here on a loopback port
 * with a stand-in replica whose view of the leases the test moves.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import type { Engine } from '../../actors/engine.ts';
import type { App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { ClusterFront, type ReplicaServices } from '../../src/http/cluster-front.ts';
import { FORWARD_HEADER, signForward } from '../../src/http/forward-signature.ts';
import { settledWriterView, WRITER_SETTLE_WAIT_MS, writerView } from '../../src/http/writer-view.ts';
import type { ClusterNode } from '../../src/open-engine.ts';

const SECRET = 'a-cluster-secret-for-tests';
const KEY = 'accounts';

type Holder = { node: string; url: string } | null;

interface Scene {
  writing: boolean;
  holder: Holder;
  answered: string[];
}

const fronts: ClusterFront[] = [];
afterEach(async () => {
  for (const front of fronts.splice(0)) await front.stop();
});

/** A cluster front named `nodeId` over a stand-in replica: the app answers 200 and records what it answered. */
async function frontOf(nodeId: string, scene: Scene): Promise<string> {
  const config = { ...loadConfig({ PORT: '0', HOST: '127.0.0.1' }), clusterSecret: SECRET };
  const front = new ClusterFront(config, () => undefined);
  fronts.push(front);
  await front.listen(nodeId);
  const app = {
    server: null,
    handle: async (request: Request) => {
      scene.answered.push(`${nodeId} ${new URL(request.url).pathname} ${await request.text()}`);
      return Response.json({ answeredBy: nodeId });
    },
  } as unknown as App;
  const node = {
    store: { partition: () => ({ writing: scene.writing }), lastSeq: 1 },
    replica: { following: true, appliedSeq: 1, lastKnownSeq: 1, waitApplied: async () => true },
    owners: { ownerOf: () => scene.holder, held: () => (scene.writing ? [KEY] : []) },
  } as unknown as ClusterNode;
  front.replicate(app, {} as Engine, node, { live: { watchedConnectionIds: () => [] } } as unknown as ReplicaServices);
  return `http://127.0.0.1:${front.port}`;
}

const LOGIN_BODY = JSON.stringify({ email: 'a@example.com', password: 'long enough pw' });

function login(baseUrl: string, forwarded: boolean): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (forwarded) headers[FORWARD_HEADER] = signForward(SECRET, 'POST', '/api/auth/login', { address: '10.0.0.9', host: 'jobs.example', https: false }, Date.now());
  return fetch(`${baseUrl}/api/auth/login`, { method: 'POST', headers, body: LOGIN_BODY });
}

describe('the view of who writes a partition', () => {
  test('here, elsewhere, taking over, moving', () => {
    const at = (writing: boolean, holder: Holder) => writerView({ writing: () => writing, ownerOf: () => holder }, 'w', KEY).kind;
    expect(at(true, { node: 'w', url: 'http://w' })).toBe('here');
    expect(at(false, { node: 'x', url: 'http://x' })).toBe('elsewhere');
    expect(at(false, { node: 'w', url: 'http://w' })).toBe('taking-over');
    expect(at(false, null)).toBe('moving');
    expect(at(false, { node: 'x', url: '' })).toBe('moving');
  });

  test('the wait ends as soon as a writer is known, and after the bound when none is', async () => {
    const scene = { writing: false, holder: null as Holder };
    setTimeout(() => (scene.holder = { node: 'x', url: 'http://x' }), 100);
    const view = await settledWriterView({ writing: () => scene.writing, ownerOf: () => scene.holder }, 'w', KEY);
    expect(view).toEqual({ kind: 'elsewhere', holder: { node: 'x', url: 'http://x' } });
    const startedMs = performance.now();
    expect((await settledWriterView({ writing: () => false, ownerOf: () => null }, 'w', KEY, 150)).kind).toBe('moving');
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(140);
  });
});

describe('a write while the writer is not known yet', () => {
  test('a forward to a node that just took the lease is answered once it writes, not refused', async () => {
    const scene: Scene = { writing: false, holder: null, answered: [] };
    const w = await frontOf('node-w', scene);
    scene.holder = { node: 'node-w', url: w };
    setTimeout(() => (scene.writing = true), 300);
    const answer = await login(w, true);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ answeredBy: 'node-w' });
  });

  test('a node that sees the partition moving forwards the write once the new writer holds the lease', async () => {
    const writerScene: Scene = { writing: true, holder: null, answered: [] };
    const writer = await frontOf('node-x', writerScene);
    writerScene.holder = { node: 'node-x', url: writer };
    const scene: Scene = { writing: false, holder: null, answered: [] };
    const f = await frontOf('node-f', scene);
    setTimeout(() => (scene.holder = { node: 'node-x', url: writer }), 300);
    const answer = await login(f, false);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ answeredBy: 'node-x' });
    expect(writerScene.answered).toEqual([`node-x /api/auth/login ${LOGIN_BODY}`]);
  });

  test('a forward refused by a node that no longer writes the partition is sent once more, with its body, when the view moves on', async () => {
    const writerScene: Scene = { writing: true, holder: null, answered: [] };
    const writer = await frontOf('node-y', writerScene);
    writerScene.holder = { node: 'node-y', url: writer };
    const staleScene: Scene = { writing: false, holder: { node: 'node-y', url: writer }, answered: [] };
    const stale = await frontOf('node-x', staleScene);
    // the forwarding node still believes node-x writes; its view follows 300 ms later
    const scene: Scene = { writing: false, holder: { node: 'node-x', url: stale }, answered: [] };
    const f = await frontOf('node-f', scene);
    setTimeout(() => (scene.holder = { node: 'node-y', url: writer }), 300);
    const answer = await login(f, false);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ answeredBy: 'node-y' });
    expect(staleScene.answered).toEqual([]);
    expect(writerScene.answered).toEqual([`node-y /api/auth/login ${LOGIN_BODY}`]);
  });

  test('a forward for a partition another node writes is refused at once; a writer that stays unknown is 503 after the bound', async () => {
    const scene: Scene = { writing: false, holder: { node: 'node-x', url: 'http://127.0.0.1:9' }, answered: [] };
    const w = await frontOf('node-w', scene);
    const refused = await login(w, true);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('a forward from a node with an older view');

    scene.holder = null;
    const startedMs = performance.now();
    const moving = await login(w, false);
    expect(moving.status).toBe(503);
    expect(((await moving.json()) as { error: { message: string } }).error.message).toContain('it is moving');
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(WRITER_SETTLE_WAIT_MS - 50);
    expect(scene.answered).toEqual([]);
  });
});
