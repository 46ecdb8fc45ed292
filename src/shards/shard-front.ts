/**
 * The HTTP thread when connections live on shards (docs/architecture.md, "Shards"): it
 * terminates HTTP, answers what concerns the accounts with its own application, and passes
 * everything about connections to the shards by the table in shard-routes.ts:
 *
 * - a request about one connection goes to its shard with its body as it arrives, unread
 *   and unparsed here (chunks are transferred to the shard's thread, not copied, where they
 *   own their buffer); the shard's application checks, caps and answers it as a single
 *   node would, and its answer comes back unchanged;
 * - a read over several connections goes to every shard keeping one of them, concurrently,
 *   and their answers are merged (shard-merge.ts); one shard's answer is passed on as it is;
 * - a shard that is down or starting answers its connections 503 with Retry-After (the
 *   envelope), and a read that needs it too; every other shard goes on serving.
 *
 * The shards authenticate each request themselves (they hold a copy of the accounts); the
 * front reads the session or API key only to know where to send it, and lets its own
 * application answer a request it cannot place (a bad key or session: the 401 is the same).
 */
import type { User } from '../../actors/accounts/account-records.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { Engine } from '../../actors/engine.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import type { ConnectionService } from '../../actors/services/connection-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { clientAddress, requestedOrigin, type PeerSource } from '../http/client-address.ts';
import { SESSION_COOKIE } from '../http/dashboard-auth.ts';
import { errorResponse } from '../http/error-envelope.ts';
import type { ForwardedClient } from '../http/forward-signature.ts';
import { bodyReader, BULK_BODY_BYTES_MAX, FORM_BODY_BYTES_MAX, isJsonContentType, type BodyReader } from '../http/read-body.ts';
import type { MergeContext, Merger } from './shard-merge.ts';
import type { ShardLink } from './shard-link.ts';
import { shardOf } from './shard-runtime.ts';
import { shardRoute } from './shard-routes.ts';

export interface ShardFrontOptions {
  links: readonly ShardLink[];
  /** the front's own application, over its engine of the accounts */
  app: { handle(request: Request): Promise<Response> };
  engine: Engine;
  accounts: AccountService;
  connections: ConnectionService;
  config: AppDeps['config'];
  logError: (line: string) => void;
}

/** Routes split over shards whose body the application reads, and its cap there; others' bodies are not sent on. */
const SPLIT_BODY_BYTES_MAX: Readonly<Record<string, number>> = {
  'POST /api/jobs/bulk/revoke': BULK_BODY_BYTES_MAX,
  'POST /api/jobs/bulk/retry': BULK_BODY_BYTES_MAX,
  PATCH: FORM_BODY_BYTES_MAX,
};

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
        case 'split':
          return await this.split(request, url, route.answer, server);
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

  private linkOf(connectionId: string): ShardLink {
    return this.options.links[shardOf(connectionId, this.options.links.length)]!;
  }

  private async byApiKey(request: Request, server: PeerSource | null | undefined): Promise<Response> {
    const token = bearerToken(request);
    const connection = token === null ? undefined : this.options.engine.accounts.connectionByKey(token);
    if (connection === undefined) return this.options.app.handle(request);
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

  private sessionUser(request: Request): User | undefined {
    const token = sessionToken(request.headers.get('cookie'));
    if (token === undefined) return undefined;
    try {
      return this.options.accounts.requireUser(token);
    } catch {
      return undefined;
    }
  }

  /** Every shard keeping one of the user's connections answers; one answer passes on as it is, several merge. */
  private async split(request: Request, url: URL, answer: Merger | 'firstFound', server: PeerSource | null | undefined): Promise<Response> {
    const user = this.sessionUser(request);
    // no session: the front's application answers the 401 as every shard would
    if (user === undefined) return this.options.app.handle(request);
    const filter = request.method === 'GET' ? (url.searchParams.get('connectionId') ?? undefined) : undefined;
    const readable = this.options.connections.readableConnectionIds(user, filter);
    const shards = [...new Set(readable.map((id) => shardOf(id, this.options.links.length)))].sort((a, b) => a - b);
    const targets = (shards.length === 0 ? [0] : shards).map((index) => this.options.links[index]!);
    const client = this.client(request, server);
    if (targets.length === 1 || request.method === 'HEAD') return targets[0]!.request(request, client);
    const body = await this.splitBody(request, url);
    if (body === 'unread') return targets[0]!.request(request, client);
    const asked = targets.map((link) => link.request(request, client, { body, merge: true }));
    if (answer === 'firstFound') return firstFound(asked);
    const answers = await Promise.all(asked);
    const refused = answers.find((one) => one.status !== 200);
    if (refused !== undefined) return refused;
    const bodies = await Promise.all(answers.map((one) => one.json()));
    const headers = new Headers(answers[0]!.headers);
    headers.delete('content-length');
    return new Response(JSON.stringify(answer(bodies, this.mergeContext(user))), { status: 200, headers });
  }

  /**
   * The body every shard is sent: read here within the route's cap (its 413, 408 or 400 as
   * the route's own), or none for a route that reads none; `unread` for one the route refuses
   * by its content type before reading it, which the first shard then does.
   */
  private async splitBody(request: Request, url: URL): Promise<Uint8Array | null | 'unread'> {
    const cap = SPLIT_BODY_BYTES_MAX[`${request.method} ${url.pathname}`] ?? SPLIT_BODY_BYTES_MAX[request.method];
    if (cap === undefined || request.body === null) return null;
    if (!isJsonContentType(request.headers.get('content-type') ?? '')) return 'unread';
    return this.body.bytes(request, cap);
  }

  private mergeContext(user: User): MergeContext {
    const connectionOrder = this.options.connections.readableConnectionIds(user, undefined);
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
