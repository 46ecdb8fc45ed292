/**
 * The HTTP thread when connections live on shards (docs/architecture.md, "Shards"): it
 * terminates HTTP, answers what concerns the accounts with its own application, and passes
 * everything about connections to the shards by the table in shard-routes.ts:
 *
 * - a request about one connection goes to its shard with its body as it arrives, unread
 *   and unparsed here (chunks are transferred to the shard's thread, not copied, where they
 *   own their buffer); the shard's application checks, caps and answers it as a single
 *   node would, and its answer comes back unchanged;
 * - a write about one job, queue, worker or alert by its id goes to the shard keeping it,
 *   found by asking the shards of the user's connections (`locate`), so that it is written
 *   and audited once, by that shard;
 * - a read over several connections goes to every shard keeping one of them, concurrently,
 *   and their answers are merged (shard-merge.ts); one shard's answer is passed on as it is;
 *   the audit log is read from the front and every shard; a bulk action's ids go each to
 *   the shard keeping its job;
 * - a shard that is down or starting answers its connections 503 with Retry-After (the
 *   envelope), and a read that needs it too; every other shard goes on serving.
 *
 * The shards authenticate each request and check its roles themselves (they hold a copy of
 * the accounts, teams and memberships included); the front reads the session or API key
 * only to know where to send it (the connections of the user's teams), and lets its own
 * application answer a request it cannot place (a bad key or session: the 401 is the same).
 */
import { Access } from '../../actors/accounts/access.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { Engine } from '../../actors/engine.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import type { ConnectionService } from '../../actors/services/connection-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { splitBulkByOwner } from '../http/bulk-split.ts';
import { clientAddress, requestedOrigin, type PeerSource } from '../http/client-address.ts';
import { SESSION_COOKIE } from '../http/dashboard-auth.ts';
import { errorResponse } from '../http/error-envelope.ts';
import type { ForwardedClient } from '../http/forward-signature.ts';
import { bodyReader, FORM_BODY_BYTES_MAX, isJsonContentType, type BodyReader } from '../http/read-body.ts';
import type { MergeContext, Merger } from './shard-merge.ts';
import type { ShardCall } from './shard-protocol.ts';
import { shardOf } from './shard-runtime.ts';
import { shardRoute } from './shard-routes.ts';

/** What the front sends one request with, beyond the request itself. */
export interface FrontRequestOptions {
  /** Sent instead of the request's own body (null: none). */
  body?: Uint8Array | null;
  /** The answer is merged with others' (shard-merge.ts): add what the merge needs, reading as of `nowMs`. */
  merge?: { nowMs: number };
  /** The shards this one answer covers (several when `placeOf` grouped them); absent: the link's own. */
  covering?: readonly number[];
}

/**
 * Where the connections of one shard are answered: a shard on a thread of this process
 * (shard-link.ts), or a partition of a cluster kept by this node or another one
 * (src/http/partition-links.ts). A request it cannot answer now is a DomainError (503).
 */
export interface FrontLink {
  request(request: Request, client: ForwardedClient, options?: FrontRequestOptions): Promise<Response>;
  call(call: ShardCall): Promise<unknown>;
}

export interface ShardFrontOptions {
  links: readonly FrontLink[];
  /**
   * Where each shard is answered now (a cluster node's id): shards answered in the same place
   * are asked in one request covering them all. Absent: each shard is asked on its own.
   */
  placeOf?: (shard: number) => string;
  /**
   * Who writes each shard now (a cluster node's id): a bulk action's ids of shards with one
   * writer go to it in one part. Absent: one part per shard.
   */
  writerOf?: (shard: number) => string;
  /** the front's own application, over its engine of the accounts */
  app: { handle(request: Request): Promise<Response> };
  engine: Engine;
  accounts: AccountService;
  connections: ConnectionService;
  config: AppDeps['config'];
  logError: (line: string) => void;
}

export class ShardFront {
  private readonly body: BodyReader;

  constructor(private readonly options: ShardFrontOptions) {
    this.body = bodyReader({ config: options.config, logError: options.logError });
  }

  async handle(request: Request, server?: PeerSource | null): Promise<Response> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return this.options.app.handle(request); // the edge's own answer to what cannot be routed
    }
    const route = shardRoute(request.method, url.pathname);
    try {
      switch (route.by) {
        case 'front':
          return await this.options.app.handle(request);
        case 'apiKey':
          return await this.byApiKey(request, server);
        case 'bodyConnection':
          return await this.byBodyConnection(request, server);
        case 'keyOrBodyConnection':
          return await this.byKeyOrBodyConnection(request, server);
        case 'target':
          return await this.byTarget(request, url, server);
        case 'bulk':
          return await this.bulk(request, server);
        case 'split':
          return await this.split(request, url, route.answer, server);
        case 'everywhere':
          return await this.everywhere(request, route.answer, server);
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return this.errorAnswer(url, error);
    }
  }

  private client(request: Request, server: PeerSource | null | undefined): ForwardedClient {
    const { config } = this.options;
    return { address: clientAddress(request, server, config), ...requestedOrigin(request, server, config) };
  }

  private linkOf(connectionId: string): FrontLink {
    return this.options.links[shardOf(connectionId, this.options.links.length)]!;
  }

  private async byApiKey(request: Request, server: PeerSource | null | undefined): Promise<Response> {
    const token = bearerToken(request);
    const connection = token === null ? undefined : this.options.engine.accounts.connectionByKey(token);
    if (connection === undefined) return this.options.app.handle(request);
    return this.linkOf(connection.id).request(request, this.client(request, server));
  }

  /** With an API key this front knows, its connection's shard; else the shard of the connection the body names. */
  private async byKeyOrBodyConnection(request: Request, server: PeerSource | null | undefined): Promise<Response> {
    const token = bearerToken(request);
    const connection = token === null ? undefined : this.options.engine.accounts.connectionByKey(token);
    if (connection === undefined) return this.byBodyConnection(request, server);
    return this.linkOf(connection.id).request(request, this.client(request, server));
  }

  /** Creating an alert rule or channel: the shard of the connection the body names (read here, within the route's cap). */
  private async byBodyConnection(request: Request, server: PeerSource | null | undefined): Promise<Response> {
    const first = this.options.links[0]!;
    // the route refuses another content type before reading: so does the shard this goes to
    if (!isJsonContentType(request.headers.get('content-type') ?? '')) return first.request(request, this.client(request, server));
    const bytes = await this.body.bytes(request, FORM_BODY_BYTES_MAX);
    const client = this.client(request, server);
    let named: unknown;
    try {
      named = (JSON.parse(new TextDecoder().decode(bytes)) as { connectionId?: unknown } | null)?.connectionId;
    } catch {
      named = undefined; // not JSON: any shard answers the 400
    }
    const known = typeof named === 'string' && this.options.engine.accounts.connections.has(named);
    return (known ? this.linkOf(named as string) : first).request(request, client, { body: bytes });
  }

  /** The signed-in user's access (their teams' connections), or undefined without a live session. */
  private sessionAccess(request: Request): Access | undefined {
    const token = sessionToken(request.headers.get('cookie'));
    if (token === undefined) return undefined;
    try {
      return new Access(this.options.accounts.requireUser(token), this.options.engine.accounts);
    } catch {
      return undefined;
    }
  }

  /** The user's readable connections grouped by the shard keeping them, shards in order; each group in the user's order. */
  private shardsOf(access: Access, filter: string | undefined): Map<number, string[]> {
    const byShard = new Map<number, string[]>();
    for (const id of this.options.connections.readableConnectionIds(access, filter)) {
      const shard = shardOf(id, this.options.links.length);
      byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
    }
    return new Map([...byShard].sort(([a], [b]) => a - b));
  }

  /**
   * A write about one target by its id: the shards of the user's connections say which
   * connection keeps it (the first in the user's order, as one engine looks), and that shard
   * answers; when none does, the first of them answers the 404 (once). A shard that is down
   * may keep it: then its 503, not a 404.
   */
  private async byTarget(request: Request, url: URL, server: PeerSource | null | undefined): Promise<Response> {
    const access = this.sessionAccess(request);
    // no session: the front's application answers the 401 as every shard would
    if (access === undefined) return this.options.app.handle(request);
    const byShard = this.shardsOf(access, undefined);
    const located = await Promise.allSettled(
      this.placed(byShard).map(([shard, connectionIds]) => this.options.links[shard]!.call({ what: 'locate', method: request.method, pathname: url.pathname, connectionIds })),
    );
    const order = this.options.connections.readableConnectionIds(access, undefined);
    const found = located.flatMap((one) => (one.status === 'fulfilled' && typeof one.value === 'string' ? [one.value] : []));
    found.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    const down = located.find((one): one is PromiseRejectedResult => one.status === 'rejected');
    if (found.length === 0 && down !== undefined) throw down.reason;
    const link = found.length > 0 ? this.linkOf(found[0]!) : this.options.links[byShard.keys().next().value ?? 0]!;
    return link.request(request, this.client(request, server));
  }

  /**
   * A bulk action: its ids grouped by the shard keeping each job, one part per shard, the
   * results merged (bulk-split.ts). A shard that cannot say what it keeps (down, or in a
   * cluster a partition nobody keeps right now) takes the ids no other shard knows, and its
   * part answers them `success: false` with the reason; only when none can say is it a 503.
   */
  private async bulk(request: Request, server: PeerSource | null | undefined): Promise<Response> {
    const access = this.sessionAccess(request);
    // no session: the front's application answers the 401 as every shard would
    if (access === undefined) return this.options.app.handle(request);
    const byShard = this.shardsOf(access, undefined);
    const order = this.options.connections.readableConnectionIds(access, undefined);
    const client = this.client(request, server);
    const links = this.options.links;
    return splitBulkByOwner(request, {
      keysOf: async (ids) => {
        const placed = this.placed(byShard);
        const asked = await Promise.allSettled(placed.map(([shard, connectionIds]) => links[shard]!.call({ what: 'locateJobs', ids, connectionIds })));
        const located = asked.flatMap((one) => (one.status === 'fulfilled' ? [one.value as Array<string | null>] : []));
        const downAt = asked.findIndex((one) => one.status === 'rejected');
        // nobody could say: the action waits for them (503), as a read that needs them does
        if (downAt >= 0 && located.length === 0) throw (asked[downAt] as PromiseRejectedResult).reason;
        return ids.map((_, at) => {
          // the first of the user's connections keeping it, as one engine looks
          const found = located.map((answers) => answers[at]).filter((id): id is string => typeof id === 'string');
          found.sort((a, b) => order.indexOf(a) - order.indexOf(b));
          if (found.length > 0) return String(shardOf(found[0]!, links.length));
          // not found where asked: it may be kept where nobody answered, whose part then says why for its ids
          return downAt >= 0 ? String(placed[downAt]![0]) : undefined;
        });
      },
      fallbackKey: String(byShard.keys().next().value ?? 0),
      writerOf: (key) => this.options.writerOf?.(Number(key)) ?? key,
      answerPart: (key, part) => links[Number(key)]!.request(part.request, client, part.body === undefined ? {} : { body: new TextEncoder().encode(part.body) }),
    });
  }

  /** Every shard keeping one of the user's connections answers; one answer passes on as it is, several merge. */
  private async split(request: Request, url: URL, answer: Merger | 'firstFound', server: PeerSource | null | undefined): Promise<Response> {
    const access = this.sessionAccess(request);
    // no session: the front's application answers the 401 as every shard would
    if (access === undefined) return this.options.app.handle(request);
    const filter = request.method === 'GET' ? (url.searchParams.get('connectionId') ?? undefined) : undefined;
    const shards = [...this.shardsOf(access, filter).keys()];
    const groups = this.groups(shards.length === 0 ? [0] : shards);
    const client = this.client(request, server);
    if (groups.length === 1 || request.method === 'HEAD') return this.ask(groups[0]!, request, client, {});
    // the routes split are reads: no body goes on
    const merge = { nowMs: this.options.engine.clock.nowMs() };
    const asked = groups.map((group) => this.ask(group, request, client, { body: null, merge }));
    if (answer === 'firstFound') return firstFound(asked);
    return this.merged(await Promise.all(asked), answer, access);
  }

  /**
   * A read of what every store keeps apart (the audit log): the front's application answers
   * first (its refusal is the answer), then every shard; the pages are merged.
   */
  private async everywhere(request: Request, answer: Merger, server: PeerSource | null | undefined): Promise<Response> {
    const own = await this.options.app.handle(request);
    const access = this.sessionAccess(request);
    if (own.status !== 200 || access === undefined || request.method === 'HEAD') return own;
    const client = this.client(request, server);
    const answers = await Promise.all(this.groups(this.options.links.map((_, shard) => shard)).map((group) => this.ask(group, request, client, {})));
    return this.merged([own, ...answers], answer, access);
  }

  /** Shards in order, grouped by where they are answered (`placeOf`), each group in the order of its first shard. */
  private groups(shards: readonly number[]): number[][] {
    const placeOf = this.options.placeOf;
    if (placeOf === undefined) return shards.map((shard) => [shard]);
    const byPlace = new Map<string, number[]>();
    for (const shard of shards) {
      const place = placeOf(shard);
      byPlace.set(place, [...(byPlace.get(place) ?? []), shard]);
    }
    return [...byPlace.values()];
  }

  /** One request answered for every shard of `group`, by the link of its first. */
  private ask(group: readonly number[], request: Request, client: ForwardedClient, options: FrontRequestOptions): Promise<Response> {
    return this.options.links[group[0]!]!.request(request, client, group.length === 1 ? options : { ...options, covering: group });
  }

  /** Connections grouped by shard, as one entry per place (`placeOf`): the first shard of each place with every connection answered there. */
  private placed(byShard: Map<number, string[]>): Array<[number, string[]]> {
    return this.groups([...byShard.keys()]).map((group) => [group[0]!, group.flatMap((shard) => byShard.get(shard)!)]);
  }

  /** The shards' answers merged; the first that is not a 200 is the answer instead. */
  private async merged(answers: Response[], answer: Merger, access: Access): Promise<Response> {
    const refused = answers.find((one) => one.status !== 200);
    if (refused !== undefined) {
      for (const one of answers) if (one !== refused) void one.body?.cancel().catch(() => undefined);
      return refused;
    }
    const bodies = await Promise.all(answers.map((one) => one.json()));
    const headers = new Headers(answers[0]!.headers);
    headers.delete('content-length');
    return new Response(JSON.stringify(answer(bodies, this.mergeContext(access))), { status: 200, headers });
  }

  private mergeContext(access: Access): MergeContext {
    const connectionOrder = this.options.connections.readableConnectionIds(access, undefined);
    const known = this.options.engine.accounts.connections;
    const createdAtMs = (id: string): number => known.get(id)?.createdAtMs ?? 0;
    return { connectionOrder, connectionListOrder: [...connectionOrder].sort((a, b) => createdAtMs(a) - createdAtMs(b)) };
  }

  /** An answer of the front's own: the envelope with the edge's headers (edge-headers.ts). */
  private errorAnswer(url: URL, error: DomainError): Response {
    const response = errorResponse(this.options.config.publicUrl ?? '', {
      code: error.code,
      message: error.message,
      details: error.details,
      extraBody: error.extraBody,
      headers: error.headers,
    });
    response.headers.set('x-content-type-options', 'nosniff');
    if (url.pathname.startsWith('/api/')) response.headers.set('cache-control', 'no-store');
    return response;
  }
}

/**
 * A request about one job or alert: the shard keeping it answers, the others say 404. A
 * shard that is down may be the one keeping it, so then the answer is its 503, not a 404.
 */
async function firstFound(asked: Promise<Response>[]): Promise<Response> {
  const answers = await Promise.allSettled(asked);
  const found = answers.find((one): one is PromiseFulfilledResult<Response> => one.status === 'fulfilled' && one.value.status !== 404);
  const down = answers.find((one): one is PromiseRejectedResult => one.status === 'rejected');
  const chosen = found?.value ?? (down === undefined ? (answers[0] as PromiseFulfilledResult<Response>).value : undefined);
  for (const one of answers) if (one.status === 'fulfilled' && one.value !== chosen) void one.value.body?.cancel().catch(() => undefined);
  if (chosen === undefined) throw down!.reason;
  return chosen;
}

/** The session cookie's value, as the application's cookie parser reads it. */
function sessionToken(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== SESSION_COOKIE) continue;
    try {
      return decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}
