/**
 * One partition's link of a cluster node (src/http/cluster-reads.ts), against stand-in keepers
 * on loopback ports: a read answered here carries its partitions as its read scope; one
 * answered elsewhere goes to the first node keeping every partition asked, with the scope
 * signed, and on to the next when one refuses the connection or no longer keeps them; asking
 * stops at the body deadline with a 503 to retry; a write goes to the writer; a keeper's
 * locate call is answered only for its signed body and the partitions it keeps.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import type { Server } from 'bun';
import { DomainError } from '../../actors/domain-error.ts';
import type { Engine } from '../../actors/engine.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { clientAddress } from '../../src/http/client-address.ts';
import { answerCall, NOT_KEEPER_HEADER, partitionLinks, placeOfPartition, readScopeOfForward, type ClusterReadsOptions } from '../../src/http/cluster-reads.ts';
import type { ForwardTarget } from '../../src/http/forward-request.ts';
import { FORWARD_HEADER, signForward, verifyForward } from '../../src/http/forward-signature.ts';
import { readScopeOf } from '../../src/http/read-scope.ts';
import { TrustedProxies } from '../../src/http/trusted-proxies.ts';
import { ADMIN, singleTestApp } from '../support/test-app.ts';

const SECRET = 'a-cluster-secret-for-tests';
const CLIENT = { address: '198.51.100.7', host: 'jobs.example', https: false };
const servers: Server<undefined>[] = [];
afterAll(() => servers.forEach((server) => server.stop(true)));

interface Keeper extends ForwardTarget {
  asked: Array<{ path: string; scope: unknown }>;
}

/** A stand-in node answering each request with `answer` (after `delayMs`), recording what it was asked and the scope signed on it. */
function keeper(node: string, answer: () => Response, delayMs = 0): Keeper {
  const asked: Keeper['asked'] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (request) => {
      const url = new URL(request.url);
      const vouched = verifyForward(SECRET, request.method, url.pathname + url.search, request.headers.get(FORWARD_HEADER), Date.now());
      asked.push({ path: url.pathname + url.search, scope: vouched?.scope ?? null });
      if (delayMs > 0) await Bun.sleep(delayMs);
      return answer();
    },
  });
  servers.push(server);
  return { node, url: `http://127.0.0.1:${server.port}`, asked };
}

const notKeeping = () => new Response('{}', { status: 503, headers: { [NOT_KEEPER_HEADER]: 'p.1' } });
const answered = (by: string) => () => Response.json({ by });

function linksWith(overrides: Partial<ClusterReadsOptions>): { links: ReturnType<typeof partitionLinks>; local: Request[]; writes: Array<[string, string | undefined]> } {
  const local: Request[] = [];
  const writes: Array<[string, string | undefined]> = [];
  const options: ClusterReadsOptions = {
    nodeId: 'here',
    partitions: 4,
    secret: SECRET,
    config: { trustedProxies: TrustedProxies.none, bodyTimeoutMs: 300 },
    answersHere: () => false,
    keepersElsewhere: () => [],
    app: {
      handle: async (request) => {
        local.push(request);
        return Response.json({ by: 'here' });
      },
    },
    engine: {} as Engine,
    toWriter: async (key, _request, body) => {
      writes.push([key, body]);
      return Response.json({ wrote: key });
    },
    ...overrides,
  };
  // the peer a forward names: this test's client
  const peer = { requestIP: () => ({ address: '127.0.0.1' }) };
  return { links: partitionLinks(options, peer), local, writes };
}

const read = () => new Request('http://node.test/api/jobs?limit=5', { headers: { cookie: 'session=x' } });

describe('a partition read', () => {
  test('answered here: by the application, for the partitions covered only, as the client the front resolved', async () => {
    const { links, local } = linksWith({ answersHere: () => true });
    await links[2]!.request(read(), CLIENT, { merge: { nowMs: 1234 }, covering: [2, 3] });
    expect(readScopeOf(local[0]!)).toEqual({ partitions: [2, 3], partitionCount: 4, mergeNowMs: 1234 });
    expect(clientAddress(local[0]!, null, { trustedProxies: TrustedProxies.none })).toBe(CLIENT.address);
    await links[1]!.request(read(), CLIENT);
    expect(readScopeOf(local[1]!)).toEqual({ partitions: [1], partitionCount: 4 });
  });

  test('elsewhere: the first node keeping every partition asked, the scope signed; one that no longer keeps them or refuses the connection is followed by the next', async () => {
    const a = keeper('a', notKeeping);
    const b = keeper('b', answered('b'));
    const gone: ForwardTarget = { node: 'gone', url: 'http://127.0.0.1:9' };
    const c = keeper('c', answered('c'));
    const { links, local } = linksWith({ keepersElsewhere: (partition) => (partition === 1 ? [a, gone, b, c] : [c, b, a]) });
    const answer = await links[1]!.request(read(), CLIENT, { merge: { nowMs: 99 }, covering: [1, 3] });
    expect(await answer.json()).toEqual({ by: 'b' });
    expect(local).toEqual([]);
    expect(a.asked).toEqual([{ path: '/api/jobs?limit=5', scope: { partitions: [1, 3], partitionCount: 4, mergeNowMs: 99 } }]);
    expect(b.asked.length).toBe(1);
    expect(c.asked.length).toBe(0);
  });

  test('only nodes keeping all of them are asked; none: 503 with Retry-After', async () => {
    const a = keeper('a', answered('a'));
    const b = keeper('b', answered('b'));
    const { links } = linksWith({ keepersElsewhere: (partition) => (partition === 0 ? [a, b] : [b]) });
    expect(await (await links[0]!.request(read(), CLIENT, { covering: [0, 2] })).json()).toEqual({ by: 'b' });
    expect(a.asked.length).toBe(0);
    const none = linksWith({ keepersElsewhere: (partition) => (partition === 0 ? [a] : [b]) });
    const refused = await none.links[0]!.request(read(), CLIENT, { covering: [0, 2] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('SERVICE_UNAVAILABLE');
    expect((refused as DomainError).headers?.['retry-after']).toBe('1');
  });

  test('a keeper that does not answer within the body deadline: 503 with Retry-After, the next not asked', async () => {
    const slow = keeper('slow', answered('slow'), 3_000);
    const next = keeper('next', answered('next'));
    const { links } = linksWith({ keepersElsewhere: () => [slow, next] });
    const startedAtMs = Date.now();
    const refused = (await links[0]!.request(read(), CLIENT).catch((error: unknown) => error)) as DomainError;
    expect(Date.now() - startedAtMs).toBeLessThan(2_500);
    expect(refused.code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.headers?.['retry-after']).toBe('1');
    expect(next.asked.length).toBe(0);
  });

  test('every partition answered here, or grouped by the first node keeping it', () => {
    const a = keeper('a', answered('a'));
    const options = { answersHere: (partition: number) => partition === 0, keepersElsewhere: (partition: number) => (partition === 3 ? [] : [a]) };
    expect([0, 1, 2, 3].map((partition) => placeOfPartition(options, partition))).toEqual(['here', 'a', 'a', 'nobody:3']);
  });
});

describe('a partition write', () => {
  test('goes to the writer of the link\'s partition, with the body the front read', async () => {
    const { links, writes, local } = linksWith({ answersHere: () => true });
    const retry = new Request('http://node.test/api/jobs/j1/retry', { method: 'POST' });
    await links[3]!.request(retry, CLIENT);
    await links[2]!.request(new Request('http://node.test/api/alert-rules', { method: 'POST' }), CLIENT, { body: new TextEncoder().encode('{"a":1}') });
    expect(writes).toEqual([
      ['p.3', undefined],
      ['p.2', '{"a":1}'],
    ]);
    expect(local).toEqual([]);
  });
});

describe('the read scope of a signed forward', () => {
  test('only partitions of this cluster\'s count, at least one, each below it', () => {
    expect(readScopeOfForward({ partitions: [1, 2], partitionCount: 4, mergeNowMs: 5 }, 4)).toEqual({ partitions: [1, 2], partitionCount: 4, mergeNowMs: 5 });
    expect(readScopeOfForward({ partitions: [1], partitionCount: 4 }, 4)).toEqual({ partitions: [1], partitionCount: 4 });
    expect(readScopeOfForward({ partitions: [1], partitionCount: 8 }, 4)).toBeNull();
    expect(readScopeOfForward({ partitions: [], partitionCount: 4 }, 4)).toBeNull();
    expect(readScopeOfForward({ partitions: [4], partitionCount: 4 }, 4)).toBeNull();
    expect(readScopeOfForward({ bodySha256: 'x' }, 4)).toBeNull();
    expect(readScopeOfForward(undefined, 4)).toBeNull();
  });

  test('signed with the client: a changed scope is not believed', () => {
    const signed = signForward(SECRET, 'GET', '/api/jobs', CLIENT, 1_000, { partitions: [1], partitionCount: 4 });
    expect(verifyForward(SECRET, 'GET', '/api/jobs', signed, 1_000)).toEqual({ ...CLIENT, scope: { partitions: [1], partitionCount: 4 } });
    const [stamp, , mac] = signed.split('.');
    const widened = Buffer.from(JSON.stringify([CLIENT.address, CLIENT.host, CLIENT.https, { partitions: [0, 1, 2, 3], partitionCount: 4 }])).toString('base64url');
    expect(verifyForward(SECRET, 'GET', '/api/jobs', `${stamp}.${widened}.${mac}`, 1_000)).toBeNull();
    for (const scope of [{ partitions: [-1], partitionCount: 4 }, { partitions: [1] }, { mergeNowMs: 'soon' }, { bodySha256: 5 }, [1]]) {
      expect(verifyForward(SECRET, 'GET', '/api/jobs', signForward(SECRET, 'GET', '/api/jobs', CLIENT, 1_000, scope as never), 1_000)).toBeNull();
    }
  });
});

describe('a locate call from another node', () => {
  test('answered for its signed body, from this engine, when every partition it names is kept here; else 503 naming them', async () => {
    const app = await singleTestApp();
    const cookie = await app.login(ADMIN.email, ADMIN.password);
    const connection = await app.createConnection(cookie, 'locate');
    const other = await app.createConnection(cookie, 'other');
    await app.ingest(connection.apiKey, [{ type: 'job_state_change', timestamp: new Date(app.clock.nowMs()).toISOString(), framework: 'celery', connectionId: connection.id, job: { externalId: 't1', name: 'x', queue: 'q', state: 'failed' } }]);
    const jobId = (await app.request('GET', '/api/jobs', { headers: { cookie } })).json.data[0].id as string;
    const body = JSON.stringify({ what: 'locateJobs', ids: [jobId, 'nope'], connectionIds: [other.id, connection.id] });
    const digest = new Bun.CryptoHasher('sha256').update(body).digest('hex');
    const ask = (text: string, kept: (partition: number) => boolean) => answerCall(new Request('http://n/api/cluster/call', { method: 'POST', body: text }), digest, app.engine, 4, kept);
    expect(await (await ask(body, () => true)).json()).toEqual({ value: [connection.id, null] });
    const missing = partitionOf(other.id, 4);
    const refused = (await ask(body, (partition) => partition !== missing).catch((error: unknown) => error)) as DomainError;
    expect(refused.code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.headers?.[NOT_KEEPER_HEADER]).toBe(`p.${missing}`);
    const changed = (await ask(body.replace('nope', 'nop2'), () => true).catch((error: unknown) => error)) as DomainError;
    expect(changed.code).toBe('UNAUTHORIZED');
  });
});

describe('a locate call asked of a keeper', () => {
  test('the answer\'s value, the body\'s digest signed; a keeper answering anything else is a 503 to retry', async () => {
    const bodies: string[] = [];
    const good = keeper('good', () => Response.json({ value: ['c1', null] }));
    const call = { what: 'locateJobs' as const, ids: ['a', 'b'], connectionIds: ['x'] };
    const { links } = linksWith({ keepersElsewhere: () => [good] });
    expect(await links[partitionOf('x', 4)]!.call(call)).toEqual(['c1', null]);
    const scope = good.asked[0]!.scope as { bodySha256: string };
    bodies.push(JSON.stringify(call));
    expect(scope.bodySha256).toBe(new Bun.CryptoHasher('sha256').update(bodies[0]!).digest('hex'));
    const refusing = keeper('refusing', () => Response.json({ error: { message: 'stale signature' } }, { status: 401 }));
    const other = linksWith({ keepersElsewhere: () => [refusing] });
    const refused = (await other.links[0]!.call(call).catch((error: unknown) => error)) as DomainError;
    expect(refused.code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.message).toContain('stale signature');
  });
});
