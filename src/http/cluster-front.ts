/**
 * The HTTP side of a cluster node (docs/cluster.md, stages 2a and 2b-i: any node answers
 * any request, reads from its own replica). It listens as soon as the node is connected
 * to NATS and goes through these roles:
 *
 * - standby: every request except /api/health is forwarded to the lease holder's advertised
 *   URL (src/http/forward-request.ts); with no holder known, or the holder unreachable,
 *   the answer is 503 with Retry-After, for the client to retry (the usual SDK loop).
 *   Once the replica has caught up (`replicate`) and while it follows the log, requests
 *   that only read (src/http/replica-routes.ts) are answered here by the application on
 *   the replica engine, live streams included; writes are still forwarded, and their
 *   answer is held until the replica applied the log sequence the owner names in
 *   LOG_SEQ_HEADER (at most READ_YOUR_WRITES_WAIT_MS), so a write through this node is
 *   seen by the next read through it;
 * - taking over: this node won the lease and catches up; reads as a standby, writes 503;
 * - owner: the application serves every request itself, and names in LOG_SEQ_HEADER the
 *   log sequence a forwarded request's records reached.
 *
 * On every role a request carrying a valid forward signature (another node vouching for
 * its client) has that client believed; one that does not is a request from its peer.
 * A signed request is never forwarded again: a node that is not the owner answers it 503,
 * so two nodes with stale views of the lease cannot pass a request back and forth.
 */
import type { Server } from 'bun';
import type { LeaseHolder } from '../../cluster/lease.ts';
import type { App } from '../app.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { LogReplica } from '../open-engine.ts';
import { vouchForClient } from './client-address.ts';
import { errorResponse } from './error-envelope.ts';
import { FORWARD_HEADER, verifyForward } from './forward-signature.ts';
import { forwardRequest } from './forward-request.ts';
import { routeAnswerer } from './replica-routes.ts';
import { DomainError } from '../../actors/domain-error.ts';

type Role = { kind: 'standby'; holder: LeaseHolder } | { kind: 'taking over' } | { kind: 'owner'; app: App };

/** On the owner's answer to a forwarded request: the log sequence its records reached (the store's last acknowledged one). */
export const LOG_SEQ_HEADER = 'x-jobwatch-log-seq';
/** How long a standby holds a forwarded write's answer for its replica to apply it; then it answers anyway (and says so once). */
export const READ_YOUR_WRITES_WAIT_MS = 2_000;

interface Replica {
  app: App;
  log: LogReplica;
  /** The log sequence the owner's store acknowledged last (read after a request, for LOG_SEQ_HEADER). */
  ownerLogSeq(): number;
}

type FrontConfig = Pick<Config, 'port' | 'host' | 'bodyTimeoutMs' | 'trustedProxies' | 'publicUrl' | 'clusterAdvertiseUrl'> & { clusterSecret: string };

/** Bun answers a body past this itself; the owner's routes apply their own caps while the body streams. */
const SERVER_BODY_BYTES_MAX = Number.MAX_SAFE_INTEGER;

export class ClusterFront {
  private role: Role = { kind: 'standby', holder: null };
  private replica: Replica | undefined;
  private server: Server<undefined> | undefined;
  private nodeId = '';
  private saidReplicaLate = false;

  constructor(
    private readonly config: FrontConfig,
    private readonly log: LogLine,
  ) {}

  /** Starts answering; resolves to the URL other nodes forward to (CLUSTER_ADVERTISE_URL or http://<HOST>:<port>). */
  listen(nodeId: string): Promise<string> {
    this.nodeId = nodeId;
    this.server = Bun.serve({
      port: this.config.port,
      hostname: this.config.host,
      maxRequestBodySize: SERVER_BODY_BYTES_MAX,
      // as Elysia's own listen; a forwarded request lifts it (the owner's deadlines apply)
      idleTimeout: 30,
      development: false,
      fetch: (request, server) => this.answer(request, server),
    });
    const port = this.server.port!;
    const advertised = this.config.clusterAdvertiseUrl ?? `http://${this.config.host}:${port}`;
    this.log(`listening on http://${this.config.host}:${port} (cluster node ${nodeId}, reached by other nodes at ${advertised}; forwarding to the lease holder until it owns the lease)`, {
      host: this.config.host,
      port,
      advertised,
    });
    return Promise.resolve(advertised);
  }

  get port(): number {
    return this.server?.port ?? 0;
  }

  holder(holder: LeaseHolder): void {
    if (this.role.kind !== 'standby') return;
    const before = this.role.holder;
    if (before?.node !== holder?.node || before?.url !== holder?.url) {
      this.log(holder === null ? 'no lease holder: answering 503 until one takes the lease' : `forwarding requests to ${holder.node} at ${holder.url}`);
    }
    this.role = { kind: 'standby', holder };
  }

  /** This node holds the lease and catches up with the log. */
  acquired(): void {
    this.role = { kind: 'taking over' };
  }

  /**
   * The replica has caught up: from now on, while it follows the log, reads are answered
   * here by `app` (built once on the replica engine; the same app serves as the owner).
   */
  replicate(app: App, log: LogReplica, ownerLogSeq: () => number): void {
    (app as { server: Server<undefined> | null }).server = this.server!;
    this.replica = { app, log, ownerLogSeq };
    this.log(`replica caught up at log seq ${log.appliedSeq}: answering reads here, forwarding writes`);
  }

  /** This node writes the log: the application answers everything from now on. */
  serve(app: App): void {
    (app as { server: Server<undefined> | null }).server = this.server!;
    this.role = { kind: 'owner', app };
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }

  private async answer(request: Request, server: Server<undefined>): Promise<Response> {
    const url = new URL(request.url);
    const vouched = verifyForward(this.config.clusterSecret, request.method, url.pathname + url.search, request.headers.get(FORWARD_HEADER), Date.now());
    if (vouched !== null) vouchForClient(request, vouched);
    const role = this.role;
    if (role.kind === 'owner') return vouched === null ? role.app.handle(request) : this.withLogSeq(await role.app.handle(request));
    if (url.pathname === '/api/health') return this.health(role);
    const replica = this.replica;
    try {
      if (vouched !== null) throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} does not own the lease (a forward from a node with an older view); retry shortly`);
      if (replica !== undefined && replica.log.following && routeAnswerer(request.method, url.pathname) !== 'owner') return await replica.app.handle(request);
      if (role.kind === 'taking over') throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} is taking over and catches up with the log; retry shortly`);
      const holder = role.holder;
      if (holder === null || holder.url === '') throw new DomainError('SERVICE_UNAVAILABLE', 'no node owns the lease right now (failover); retry shortly');
      // the owner's deadlines bound the body and the answer; a live stream may stay quiet for long
      server.timeout(request, 0);
      const answer = await forwardRequest(request, server, holder, { secret: this.config.clusterSecret, config: this.config });
      if (replica !== undefined && replica.log.following) await this.untilApplied(replica.log, answer.headers.get(LOG_SEQ_HEADER), holder.node);
      return answer;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return errorResponse(this.config.publicUrl ?? '', { code: error.code, message: error.message, headers: { 'retry-after': '1' } });
    }
  }

  /** The owner names the log sequence the request's records reached (they are acknowledged: the store's last sequence covers them). */
  private withLogSeq(answer: Response): Response {
    const seq = this.replica?.ownerLogSeq();
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

  /** Read-your-writes through a standby: hold a forwarded answer until the replica applied what it wrote, within a bound. */
  private async untilApplied(log: LogReplica, named: string | null, owner: string): Promise<void> {
    const seq = Number(named);
    if (named === null || !Number.isSafeInteger(seq) || seq <= log.appliedSeq) return;
    if (await log.waitApplied(seq, READ_YOUR_WRITES_WAIT_MS)) return;
    if (this.saidReplicaLate) return;
    this.saidReplicaLate = true;
    this.log(
      `the replica had not applied log seq ${seq} written by ${owner} within ${READ_YOUR_WRITES_WAIT_MS} ms (applied: ${log.appliedSeq}); ` +
        'answered anyway, so a read through this node right after may not show that write yet (said once)',
      { severity: 'warn' },
    );
  }

  /**
   * A standby is healthy as itself: it answers and forwards; `owner` says to whom (null
   * during a failover); `replica` how far its copy of the log is (null before it caught up).
   */
  private health(role: Exclude<Role, { kind: 'owner' }>): Response {
    const takingOver = role.kind === 'taking over';
    const log = this.replica?.log;
    const replicaFailed = log !== undefined && !log.following;
    const healthy = !takingOver && !replicaFailed;
    return Response.json({
      status: healthy ? 'ok' : 'unavailable',
      timestamp: new Date().toISOString(),
      role: role.kind === 'standby' ? 'standby' : 'taking over',
      node: this.nodeId,
      owner: role.kind === 'standby' ? (role.holder?.node ?? null) : this.nodeId,
      replica:
        log === undefined
          ? null
          : { following: log.following, appliedSeq: log.appliedSeq, lastKnownSeq: log.lastKnownSeq, lag: Math.max(0, log.lastKnownSeq - log.appliedSeq) },
    }, { status: healthy ? 200 : 503 });
  }
}
