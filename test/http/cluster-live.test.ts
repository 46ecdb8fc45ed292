/**
 * The relayed live events of a connection a cluster node does not answer
 * (src/http/cluster-live.ts), against stand-in keepers on loopback ports: the keeper's
 * Server-Sent Events arrive in this node's hub in order; a relay that ends marks a gap and is
 * opened again to the next keeper; a keeper that will not relay is passed over; after
 * partitions move, `reconcile` opens a relay for a watched connection no longer answered here
 * and closes the relay of one answered here again, each switch marked as a gap.
 */
import { afterAll, afterEach, expect, test } from 'bun:test';
import type { Server } from 'bun';
import { ClusterLiveFeed, type RelayedEvents } from '../../src/http/cluster-live.ts';
import type { ForwardTarget } from '../../src/http/forward-request.ts';
import { FORWARD_HEADER, verifyForward } from '../../src/http/forward-signature.ts';

const SECRET = 'a-cluster-secret-for-tests';
const servers: Server<undefined>[] = [];
const feeds: ClusterLiveFeed[] = [];
afterEach(() => feeds.splice(0).forEach((feed) => feed.close()));
afterAll(() => servers.forEach((server) => server.stop(true)));

interface StandIn extends ForwardTarget {
  /** the relays asked of it, by connection, each with whether its signature verified */
  asked: Array<{ connectionId: string | null; signed: boolean }>;
  /** sends an SSE message to every open relay */
  send(text: string): void;
  /** ends every open relay's stream */
  endAll(): void;
  /** breaks every open relay's stream (as a node killed mid-stream) */
  breakAll(): void;
  open(): number;
}

function standIn(node: string, relays = true): StandIn {
  const asked: StandIn['asked'] = [];
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch: (request) => {
      const url = new URL(request.url);
      const signed = verifyForward(SECRET, 'GET', url.pathname + url.search, request.headers.get(FORWARD_HEADER), Date.now()) !== null;
      asked.push({ connectionId: url.searchParams.get('connectionId'), signed });
      if (!relays) return new Response('{}', { status: 503 });
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({
        start: (c) => {
          controller = c;
          open.add(c);
          c.enqueue(new TextEncoder().encode('retry: 3000\n\n'));
        },
        cancel: () => void open.delete(controller),
      });
      request.signal.addEventListener('abort', () => open.delete(controller));
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  servers.push(server);
  return {
    node,
    url: `http://127.0.0.1:${server.port}`,
    asked,
    send: (text) => open.forEach((c) => c.enqueue(new TextEncoder().encode(text))),
    endAll: () => {
      open.forEach((c) => c.close());
      open.clear();
    },
    breakAll: () => {
      open.forEach((c) => c.error(new Error('the stand-in keeper broke its stream, as a node killed mid-stream')));
      open.clear();
    },
    open: () => open.size,
  };
}

function feedOf(keepers: ForwardTarget[], seen: string[]): ClusterLiveFeed {
  const events: RelayedEvents = {
    publish: (connectionId, event, data) => seen.push(`${connectionId} ${event} ${JSON.stringify(data)}`),
    relayGap: (connectionId) => seen.push(`${connectionId} gap`),
  };
  const feed = new ClusterLiveFeed({ nodeId: 'here', secret: SECRET, keepersOf: () => keepers, events: () => events, log: () => undefined });
  feeds.push(feed);
  return feed;
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await Bun.sleep(10);
  }
}

test('a keeper\'s events arrive in order; a keeper that will not relay is passed over; a relay that ends marks a gap and is opened again', async () => {
  const refusing = standIn('refusing', false);
  const keeper = standIn('keeper');
  const seen: string[] = [];
  const feed = feedOf([refusing, keeper], seen);
  await feed.watch(['c1']);
  expect(refusing.asked).toEqual([{ connectionId: 'c1', signed: true }]);
  expect(keeper.asked).toEqual([{ connectionId: 'c1', signed: true }]);
  keeper.send('id: 1\nevent: job\ndata: {"n":1}\n\n: keep-alive\n\nid: 2\nevent: worker\ndata: {"n":2}\n\nid: 3\nevent: job\ndata: {"n"');
  keeper.send(':3}\n\nevent: reset\ndata: {}\n\n');
  await until(() => seen.length >= 4);
  expect(seen).toEqual(['c1 job {"n":1}', 'c1 worker {"n":2}', 'c1 job {"n":3}', 'c1 gap']);
  keeper.endAll();
  await until(() => keeper.asked.length === 2);
  expect(seen.at(-1)).toBe('c1 gap');
  await until(() => keeper.open() === 1);
  keeper.send('event: job\ndata: {"n":4}\n\n');
  await until(() => seen.at(-1) === 'c1 job {"n":4}');
});

test('reconcile: a watched connection no longer answered here gets a relay, one answered here again loses it; each switch a gap', async () => {
  const keeper = standIn('keeper');
  const seen: string[] = [];
  const feed = feedOf([keeper], seen);
  feed.reconcile(['c2'], () => false);
  expect(keeper.asked.length).toBe(0);
  feed.reconcile(['c2'], () => true);
  await until(() => keeper.open() === 1);
  expect(seen).toEqual(['c2 gap']);
  feed.reconcile(['c2'], () => true);
  expect(keeper.asked.length).toBe(1);
  feed.reconcile(['c2'], () => false);
  await until(() => keeper.open() === 0);
  expect(seen).toEqual(['c2 gap', 'c2 gap']);
});

test('unwatched, a relay is kept for the resume grace, then closed; watched again within it, kept', async () => {
  const keeper = standIn('keeper');
  const feed = feedOf([keeper], []);
  await feed.watch(['c3']);
  feed.unwatch('c3', Date.now() + 150);
  await feed.watch(['c3']);
  await Bun.sleep(300);
  expect(keeper.open()).toBe(1);
  feed.unwatch('c3', Date.now() + 100);
  await until(() => keeper.open() === 0);
  expect(keeper.asked.length).toBe(1);
});

test('a relay broken mid-stream goes on with the next keeper at once, the gap marked before its events', async () => {
  const first = standIn('first');
  const second = standIn('second');
  const seen: string[] = [];
  const feed = feedOf([first, second], seen);
  await feed.watch(['c4']);
  first.send('event: job\ndata: {"n":1}\n\n');
  await until(() => seen.length === 1);
  first.breakAll();
  await until(() => second.open() === 1);
  second.send('event: job\ndata: {"n":2}\n\n');
  await until(() => seen.at(-1) === 'c4 job {"n":2}');
  expect(seen).toEqual(['c4 job {"n":1}', 'c4 gap', 'c4 job {"n":2}']);
});
