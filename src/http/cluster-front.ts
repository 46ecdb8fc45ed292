/**
 * The HTTP side of a cluster node (docs/cluster.md, "How it works": any node
 * answers any request, reads from its own replica, writes go to the writer of their
 * partition). It listens as soon as the node is connected to NATS:
 *
 * - until the replica has recovered (`replicate`), every request but /api/health is
 *   answered 503 with Retry-After (nothing is known yet: not the state, not the owners);
 * - then requests that only read (src/http/replica-routes.ts) are answered here by the
 *   application on the replica engine, live streams included, while the replica follows;
 * - a request that writes goes to the writer of its partition (src/http/write-partition.ts):
 *   answered here when this node writes it, else forwarded to the holder of the
 *   partition's lease (src/http/forward-request.ts); its answer is held until the replica
 *   applied the log sequence the writer names in LOG_SEQ_HEADER (at most
 *   READ_YOUR_WRITES_WAIT_MS), so a write through this node is seen by the next read
 *   through it. A bulk action is split by owner (src/http/bulk-split.ts).
 *
 * - a request about connections (a read over several, a read or write by a job's id, an
 *   agent's key) goes through the shards' front, whose shards are the partitions
 *   (cluster-reads.ts): a read is answered for each partition by a node keeping it, this one
 *   when it does, and the answers merged; a write by id is located by the keepers, then sent to
 *   the writer of its partition as above.
 *
 * A request carrying a valid forward signature (another node vouching for its client) has
 * that client believed. A signed request is never forwarded again: a node that does not
 * write its partition answers it 503, so two nodes with stale views of the leases cannot
 * pass a request back and forth.
 */
import type { Server } from 'bun';
import type { Engine } from '../../actors/engine.ts';
import type { App } from '../app.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ClusterNode, LogReplica } from '../open-engine.ts';
import { splitBulkByOwner } from './bulk-split.ts';
import { vouchForClient } from './client-address.ts';
import { errorResponse } from './error-envelope.ts';
import { FORWARD_HEADER, verifyForward } from './forward-signature.ts';
import { forwardRequest, type ForwardTarget } from './forward-request.ts';
import { routeAnswerer } from './replica-routes.ts';
import { ACCOUNTS_PARTITION_KEY, connectionKeyOfBody, connectionOfJob, connectionPartitionKey, writeTarget } from './write-partition.ts';
import { NOT_WRITER_HEADER, replayableBody, settledWriterView, WRITER_SETTLE_WAIT_MS } from './writer-view.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { LiveUpdates } from '../../actors/live/live-updates.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import type { ConnectionService } from '../../actors/services/connection-service.ts';
import { ShardFront } from '../shards/shard-front.ts';
import { shardRoute } from '../shards/shard-routes.ts';
import { answerCall, CLUSTER_CALL_PATH, notKeeper, partitionLinks, placeOfPartition, readScopeOfForward, type ClusterReadsOptions } from './cluster-reads.ts';
import { scopeRead } from './read-scope.ts';
import { CLUSTER_LIVE_PATH, ClusterLiveFeed } from './cluster-live.ts';

/** On a writer's answer to a forwarded request: the log sequence its records reached (the store's last acknowledged one). */
export const LOG_SEQ_HEADER = 'x-jobwatch-log-seq';
/** How often a relay of live events checks that this node still answers its connection's partition, and the relays are reconciled with who answers what. */
const RELAY_CHECK_MS = 1_000;
/** How long a node holds a forwarded write's answer for its replica to apply it; then it answers anyway (and says so once). */
export const READ_YOUR_WRITES_WAIT_MS = 2_000;

interface Replica {
  app: App;
  engine: Engine;
  node: ClusterNode;
  services: ReplicaServices;
  /** the shards' front over the partitions (cluster-reads.ts) */
  partitions: ShardFront;
}

/** What the shards' front reads the user's connections with, and the hubs relayed events go to. */
export interface ReplicaServices {
  accounts: AccountService;
  connections: ConnectionService;
  live: LiveUpdates;
}

type FrontConfig = Pick<
  Config,
  'port' | 'host' | 'bodyTimeoutMs' | 'trustedProxies' | 'publicUrl' | 'clusterAdvertiseUrl' | 'clusterPartitions' | 'cookieSecure' | 'sessionTtlMs'
> &
  Partial<Pick<Config, 'clusterReadsFrom' | 'passwordSignIn'>> & { clusterSecret: string };

/** Bun answers a body past this itself; the writer's routes apply their own caps while the body streams. */
const SERVER_BODY_BYTES_MAX = Number.MAX_SAFE_INTEGER;

export class ClusterFront {
  private replica: Replica | undefined;
  private server: Server<undefined> | undefined;
  private nodeId = '';
  private saidReplicaLate = false;
  private relaysReconciled: ReturnType<typeof setInterval> | undefined;

  /**
   * The live events of connections this node does not answer itself, relayed by a node
   * keeping them (cluster-live.ts); handed to the application's LiveUpdates.
   */
  readonly liveElsewhere: { covers(connectionId: string): boolean; feed: ClusterLiveFeed };

  constructor(
    private readonly config: FrontConfig,
    private readonly log: LogLine,
  ) {
    const front = this;
    const feed = new ClusterLiveFeed({
      get nodeId() {
        return front.nodeId;
      },
      secret: config.clusterSecret,
      keepersOf: (connectionId) => this.keepersElsewhere(partitionOf(connectionId, config.clusterPartitions)),
      events: () => this.replica?.services.live,
      log,
    });
    this.liveElsewhere = { covers: (connectionId) => this.replica !== undefined && !this.answersHere(partitionOf(connectionId, config.clusterPartitions)), feed };
  }

  /** Starts answering; resolves to the URL other nodes forward to (CLUSTER_ADVERTISE_URL or http://<HOST>:<port>). */
  listen(nodeId: string): Promise<string> {
    this.nodeId = nodeId;
    this.server = Bun.serve({
      port: this.config.port,
      hostname: this.config.host,
      maxRequestBodySize: SERVER_BODY_BYTES_MAX,
      // as Elysia's own listen; a forwarded request lifts it (the writer's deadlines apply)
      idleTimeout: 30,
      development: false,
      fetch: (request, server) => this.answer(request, server),
    });
    const port = this.server.port!;
    const advertised = this.config.clusterAdvertiseUrl ?? `http://${this.config.host}:${port}`;
    this.log(`listening on http://${this.config.host}:${port} (cluster node ${nodeId}, reached by other nodes at ${advertised}; answering 503 until the replica recovered)`, {
      host: this.config.host,
      port,
      advertised,
    });
    return Promise.resolve(advertised);
  }

  get port(): number {
    return this.server?.port ?? 0;
  }

  /**
   * The replica has recovered: from now on reads are answered here by `app` (built once on
   * the replica engine) and writes go to their partition's writer, which may be this node.
   */
  replicate(app: App, engine: Engine, node: ClusterNode, services: ReplicaServices): void {
    (app as { server: Server<undefined> | null }).server = this.server!;
    this.replica = { app, engine, node, services, partitions: this.partitionFront(app, engine, services, this.server!) };
    // partitions move: a watched connection this node stops or starts answering changes who feeds its hub
    this.relaysReconciled = setInterval(() => this.liveElsewhere.feed.reconcile(services.live.watchedConnectionIds(), (id) => this.liveElsewhere.covers(id)), RELAY_CHECK_MS);
    this.relaysReconciled.unref();
    this.log(`replica recovered at log seq ${node.replica.appliedSeq}: answering reads here, writes by the writer of their partition`);
  }

  async stop(): Promise<void> {
    clearInterval(this.relaysReconciled);
    this.liveElsewhere.feed.close();
    await this.server?.stop();
  }

  private async answer(request: Request, server: Server<undefined>): Promise<Response> {
    const url = new URL(request.url);
    const vouched = verifyForward(this.config.clusterSecret, request.method, url.pathname + url.search, request.headers.get(FORWARD_HEADER), Date.now());
    if (vouched !== null) vouchForClient(request, vouched);
    if (url.pathname === '/api/health') return this.health();
    const replica = this.replica;
    try {
      if (replica === undefined) throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} is starting (recovering its replica of the log); retry shortly`);
      const answerer = routeAnswerer(request.method, url.pathname);
      if (answerer === 'node') return await replica.app.handle(request);
      if (vouched?.scope !== undefined && request.method === 'GET' && url.pathname === CLUSTER_LIVE_PATH) return this.relayLive(request, url, server);
      if (vouched?.scope?.bodySha256 !== undefined && request.method === 'POST' && url.pathname === CLUSTER_CALL_PATH) {
        return await answerCall(request, vouched.scope.bodySha256, replica.engine, this.config.clusterPartitions, (partition) => this.keeps(partition));
      }
      const scope = answerer === 'replica' ? readScopeOfForward(vouched?.scope, this.config.clusterPartitions) : null;
      if (scope !== null) {
        // another node's part of a read: answered here for the partitions named, never passed on
        const missing = scope.partitions.filter((partition) => !this.keeps(partition));
        if (missing.length > 0) notKeeper(missing);
        scopeRead(request, scope);
      } else if (vouched === null && shardRoute(request.method, url.pathname).by !== 'front') {
        // a request about connections: the shards' front over the partitions, each answered here or by a node keeping it
        return await replica.partitions.handle(request, server);
      }
      return await this.asNode(request, server, vouched !== null);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return errorResponse(this.config.publicUrl ?? '', { code: error.code, message: error.message, headers: { 'retry-after': '1', ...error.headers } });
    }
  }

  /** Whether this node keeps partition `p` now (applied and current, its replica following the log): it answers reads of its connections. */
  private keeps(partition: number): boolean {
    const { node } = this.replica!;
    return node.replica.following && node.owners.keepsHere(`p.${partition}`);
  }

  /** Whether this node answers partition `p`'s reads itself: it keeps it, and with CLUSTER_READS_FROM=writers also writes it. */
  private answersHere(partition: number): boolean {
    if (!this.keeps(partition)) return false;
    return this.config.clusterReadsFrom !== 'writers' || this.replica!.node.store.partition(`p.${partition}`).writing;
  }

  /** The node writing partition `key` now, as this node sees it (null: nobody holds it). */
  private writerOf(key: string): string | null {
    const { node } = this.replica!;
    return node.store.partition(key).writing ? this.nodeId : (node.owners.ownerOf(key)?.node ?? null);
  }

  /** The other live nodes keeping partition `p`, the wanted writer first. */
  private keepersElsewhere(partition: number): ForwardTarget[] {
    return this.replica?.node.owners.keepersOf(`p.${partition}`).filter((keeper) => keeper.node !== this.nodeId) ?? [];
  }

  /**
   * Another node's relay of one connection's live events (cluster-live.ts): this node's hub for
   * it, as a stream, only while this node's own feed builds them (it answers the partition);
   * when it stops (the partition moved) the relay ends, and the asking node asks the keepers again.
   */
  private relayLive(request: Request, url: URL, server: Server<undefined>): Response {
    const connectionId = url.searchParams.get('connectionId') ?? '';
    const partition = partitionOf(connectionId, this.config.clusterPartitions);
    const { engine, services } = this.replica!;
    if (!this.answersHere(partition)) notKeeper([partition]);
    if (engine.connection(connectionId) === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    const subscription = services.live.relay([connectionId], request.signal);
    const check = setInterval(() => {
      if (this.answersHere(partition) && engine.connection(connectionId) !== undefined && !request.signal.aborted) return;
      clearInterval(check);
      subscription.end();
    }, RELAY_CHECK_MS);
    check.unref();
    server.timeout(request, 0);
    return new Response(subscription.stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } });
  }

  /**
   * The shards' front whose shards are the partitions (cluster-reads.ts), each answered here or
   * by a node keeping it; what it cannot place (no session, an unknown key) and what every node
   * answers alike go to `asNode`.
   */
  private partitionFront(app: App, engine: Engine, services: ReplicaServices, server: Server<undefined>): ShardFront {
    const reads: ClusterReadsOptions = {
      nodeId: this.nodeId,
      partitions: this.config.clusterPartitions,
      secret: this.config.clusterSecret,
      config: this.config,
      answersHere: (partition) => this.answersHere(partition),
      keepersElsewhere: (partition) => this.keepersElsewhere(partition),
      app,
      engine,
      toWriter: (key, request, body) => this.toWriter(key, request, server, false, body),
    };
    return new ShardFront({
      links: partitionLinks(reads, server),
      placeOf: (partition) => placeOfPartition(reads, partition),
      writerOf: (partition) => this.writerOf(`p.${partition}`) ?? `nobody:p.${partition}`,
      app: { handle: (own) => this.asNode(own, server, false) },
      engine,
      accounts: services.accounts,
      connections: services.connections,
      config: this.config,
      logError: (line) => this.log(line, { severity: 'error' }),
    });
  }

  /**
   * As every node answers what is not split by partition: reads from this node's replica,
   * writes to their partition's writer. `forwarded`: another node sent it (it is not passed on).
   */
  private async asNode(request: Request, server: Server<undefined>, forwarded: boolean): Promise<Response> {
    const { app, engine, node } = this.replica!;
    const url = new URL(request.url);
    const answerer = routeAnswerer(request.method, url.pathname);
    if (answerer === 'node') return await app.handle(request);
    if (answerer === 'replica') {
      if (!node.replica.following) throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId}'s replica stopped following the log; retry on another node`);
      return await app.handle(request);
    }
    const target = writeTarget(request, url.pathname, engine, this.config.clusterPartitions);
    if (target.kind === 'local') return await app.handle(request);
    if (target.kind === 'bulk') {
      return await splitBulkByOwner(request, {
        keysOf: async (ids) =>
          ids.map((id) => {
            const connectionId = connectionOfJob(engine, id);
            return connectionId === undefined ? undefined : connectionPartitionKey(connectionId, this.config.clusterPartitions);
          }),
        fallbackKey: ACCOUNTS_PARTITION_KEY,
        writerOf: (key) => this.writerOf(key),
        answerPart: (key, part) => this.toWriter(key, part.request, server, forwarded, part.body),
      });
    }
    if (target.kind === 'connectionInBody') {
      const key = await connectionKeyOfBody(request.clone() as Request, engine, this.config.clusterPartitions);
      return await this.toWriter(key, request, server, forwarded);
    }
    return await this.toWriter(target.key, request, server, forwarded);
  }

  /**
   * Answers here when this node writes `key`, else forwards to its writer (never a request
   * another node forwarded). While the partition's writer is not known (this node took the
   * lease and catches up, or nobody holds it) the request waits for a moment (writer-view.ts).
   */
  private async toWriter(key: string, request: Request, server: Server<undefined>, forwarded: boolean, body?: string): Promise<Response> {
    const { app, node } = this.replica!;
    const partitionView = { writing: (k: string) => node.store.partition(k).writing, ownerOf: (k: string) => node.owners.ownerOf(k) };
    const view = await settledWriterView(partitionView, this.nodeId, key);
    if (view.kind === 'here') {
      const answer = await app.handle(body === undefined ? request : withBody(request, body));
      return forwarded ? this.withLogSeq(answer) : answer;
    }
    if (forwarded) {
      throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} does not write partition ${key} (a forward from a node with an older view); retry shortly`, undefined, undefined, {
        [NOT_WRITER_HEADER]: key,
      });
    }
    if (view.kind === 'moving') throw new DomainError('SERVICE_UNAVAILABLE', `no node writes partition ${key} right now (it is moving); retry shortly`);
    if (view.kind === 'taking-over') throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} is taking partition ${key} over and catches up with the log; retry shortly`);
    // a small body is read first, so that a writer that refuses (this node's view was older than its) can be asked again
    const replay = body === undefined ? await replayableBody(request) : { body };
    const answer = await this.forwardTo(view.holder, request, server, replay?.body);
    if (answer.status !== 503 || !answer.headers.has(NOT_WRITER_HEADER) || replay === null) return answer;
    // the node this view named has handed the partition on: wait for the view to follow, then send once more
    const moved = await settledWriterView(partitionView, this.nodeId, key, WRITER_SETTLE_WAIT_MS, view.holder.node);
    if (moved.kind !== 'here' && moved.kind !== 'elsewhere') return answer;
    await answer.body?.cancel();
    if (moved.kind === 'here') return await app.handle(replay.body === undefined ? request : withBody(request, replay.body));
    return await this.forwardTo(moved.holder, request, server, replay.body);
  }

  /** Forwards to the writer and holds the answer until this node's replica applied what it wrote (read-your-writes). */
  private async forwardTo(holder: ForwardTarget, request: Request, server: Server<undefined>, body: string | undefined): Promise<Response> {
    const { node } = this.replica!;
    // the writer's deadlines bound the body and the answer; a live stream may stay quiet for long
    server.timeout(request, 0);
    const answer = await forwardRequest(request, server, holder, { secret: this.config.clusterSecret, config: this.config, body });
    if (node.replica.following) await this.untilApplied(node.replica, answer.headers.get(LOG_SEQ_HEADER), holder.node);
    return answer;
  }

  /** The writer names the log sequence the request's records reached (they are acknowledged: the store's last sequence covers them). */
  private withLogSeq(answer: Response): Response {
    const seq = this.replica?.node.store.lastSeq;
    if (seq === undefined) return answer;
    try {
      answer.headers.set(LOG_SEQ_HEADER, String(seq));
      return answer;
    } catch {
      // immutable headers (a fetched response): copy them
      const headers = new Headers(answer.headers);
      headers.set(LOG_SEQ_HEADER, String(seq));
      return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
    }
  }

  /** Read-your-writes through this node: hold a forwarded answer until the replica applied what it wrote, within a bound. */
  private async untilApplied(log: LogReplica, named: string | null, writer: string): Promise<void> {
    const seq = Number(named);
    if (named === null || !Number.isSafeInteger(seq) || seq <= log.appliedSeq) return;
    if (await log.waitApplied(seq, READ_YOUR_WRITES_WAIT_MS)) return;
    if (this.saidReplicaLate) return;
    this.saidReplicaLate = true;
    this.log(
      `the replica had not applied log seq ${seq} written by ${writer} within ${READ_YOUR_WRITES_WAIT_MS} ms (applied: ${log.appliedSeq}); ` +
        'answered anyway, so a read through this node right after may not show that write yet (said once)',
      { severity: 'warn' },
    );
  }

  /**
   * A node is healthy as itself: it answers reads and routes writes. `writes` names the
   * partitions it writes now, `keeps` those whose state it keeps (applied and current);
   * `replica` how far its copy of the log is (null while starting).
   */
  private health(): Response {
    const node = this.replica?.node;
    const log = node?.replica;
    const healthy = log !== undefined && log.following && !this.replica!.engine.halted;
    return Response.json(
      {
        status: healthy ? 'ok' : 'unavailable',
        timestamp: new Date().toISOString(),
        role: node === undefined ? 'starting' : 'node',
        node: this.nodeId,
        writes: node?.owners.held() ?? [],
        keeps: node?.owners.kept() ?? [],
        replica:
          log === undefined
            ? null
            : { following: log.following, appliedSeq: log.appliedSeq, lastKnownSeq: log.lastKnownSeq, lag: Math.max(0, log.lastKnownSeq - log.appliedSeq) },
      },
      { status: healthy ? 200 : 503 },
    );
  }
}

/** A part of a split bulk action answered here: the request with the part's ids as its body. */
function withBody(request: Request, body: string): Request {
  const headers = new Headers(request.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Request(request.url, { method: request.method, headers, body });
}
