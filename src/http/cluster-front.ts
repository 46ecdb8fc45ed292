/**
 * The HTTP side of a cluster node (docs/cluster.md, stage 2a: any node answers any request).
 * It listens as soon as the node is connected to NATS and goes through three roles:
 *
 * - standby: every request except /api/health is forwarded to the lease holder's advertised
 *   URL (src/http/forward-request.ts); with no holder known, or the holder unreachable,
 *   the answer is 503 with Retry-After, for the client to retry (the usual SDK loop);
 * - taking over: this node won the lease and replays the log; 503 with Retry-After;
 * - owner: the application serves every request itself.
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
import { vouchForClient } from './client-address.ts';
import { errorResponse } from './error-envelope.ts';
import { FORWARD_HEADER, verifyForward } from './forward-signature.ts';
import { forwardRequest } from './forward-request.ts';
import { DomainError } from '../../actors/domain-error.ts';

type Role = { kind: 'standby'; holder: LeaseHolder } | { kind: 'taking over' } | { kind: 'owner'; app: App };

type FrontConfig = Pick<Config, 'port' | 'host' | 'bodyTimeoutMs' | 'trustedProxies' | 'publicUrl' | 'clusterAdvertiseUrl'> & { clusterSecret: string };

/** Bun answers a body past this itself; the owner's routes apply their own caps while the body streams. */
const SERVER_BODY_BYTES_MAX = Number.MAX_SAFE_INTEGER;

export class ClusterFront {
  private role: Role = { kind: 'standby', holder: null };
  private server: Server<undefined> | undefined;
  private nodeId = '';

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

  /** This node holds the lease and replays the log. */
  acquired(): void {
    this.role = { kind: 'taking over' };
  }

  /** The engine is open: the application answers from now on, seeing this server as its own. */
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
    if (role.kind === 'owner') return role.app.handle(request);
    if (url.pathname === '/api/health') return this.health(role);
    try {
      if (role.kind === 'taking over') throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} is taking over and replays the log; retry shortly`);
      if (vouched !== null) throw new DomainError('SERVICE_UNAVAILABLE', `${this.nodeId} does not own the lease (a forward from a node with an older view); retry shortly`);
      const holder = role.holder;
      if (holder === null || holder.url === '') throw new DomainError('SERVICE_UNAVAILABLE', 'no node owns the lease right now (failover); retry shortly');
      // the owner's deadlines bound the body and the answer; a live stream may stay quiet for long
      server.timeout(request, 0);
      return await forwardRequest(request, server, holder, { secret: this.config.clusterSecret, config: this.config });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return errorResponse(this.config.publicUrl ?? '', { code: error.code, message: error.message, headers: { 'retry-after': '1' } });
    }
  }

  /** A standby is healthy as itself: it answers and forwards; `owner` says to whom (null during a failover). */
  private health(role: Exclude<Role, { kind: 'owner' }>): Response {
    const takingOver = role.kind === 'taking over';
    return Response.json({
      status: takingOver ? 'unavailable' : 'ok',
      timestamp: new Date().toISOString(),
      role: role.kind === 'standby' ? 'standby' : 'taking over',
      node: this.nodeId,
      owner: role.kind === 'standby' ? (role.holder?.node ?? null) : this.nodeId,
    }, { status: takingOver ? 503 : 200 });
  }
}
