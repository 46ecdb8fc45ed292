/**
 * A cluster node answering for connections it does not keep (docs/cluster.md, "Reads
 * across nodes"): each of the CLUSTER_PARTITIONS partitions is a shard of the shards' front
 * (src/shards/shard-front.ts), reached by a link that answers here when this node keeps the
 * partition and otherwise asks a node that does:
 *
 * - a read is answered for the connections of the partitions asked only: here, by the
 *   application with the request's read scope set (read-scope.ts); elsewhere, by forwarding
 *   the request with the partitions (and the instant a merged read is made as of) signed
 *   into its forward header, to the first node keeping them all; one that refuses the
 *   connection or answers that it no longer keeps them is followed by the next;
 * - a write goes to the writer of its partition, as every write does (cluster-front.ts);
 * - `locate` and `locateJobs` (where the target of a write by id is) are answered from this
 *   node's engine, or by a keeper through the internal, signed CLUSTER_CALL_PATH.
 *
 * A node that answers a signed read or call never forwards it again: when it does not keep
 * every partition named it answers 503 with NOT_KEEPER_HEADER, and the asking node tries the
 * next keeper. Asking stops at the first keeper that does not answer within the body
 * deadline (BODY_TIMEOUT_SECONDS + 1 s): that read is answered 503 with Retry-After.
 */
import { createHash } from 'node:crypto';
import { DomainError } from '../../actors/domain-error.ts';
import type { Engine } from '../../actors/engine.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import type { Config } from '../config.ts';
import type { FrontLink, FrontRequestOptions } from '../shards/shard-front.ts';
import type { ShardCall } from '../shards/shard-protocol.ts';
import type { PeerSource } from './client-address.ts';
import { vouchForClient } from './client-address.ts';
import { forwardRequest, type ForwardTarget } from './forward-request.ts';
import { FORWARD_HEADER, signForward, type ForwardedClient, type ForwardScope } from './forward-signature.ts';
import { scopeRead, type ReadScope } from './read-scope.ts';
import { routeAnswerer } from './replica-routes.ts';
import { answerLocate, type LocateCall } from './write-partition.ts';

/** The internal route a node asks another's `locate`/`locateJobs` by; answered only with a valid signature over its body. */
export const CLUSTER_CALL_PATH = '/api/cluster/call';
/** On a 503: the node does not keep every partition it was asked to answer for (its keepers moved); ask the next one. */
export const NOT_KEEPER_HEADER = 'x-jobwatch-not-keeper';
/** A locate call names at most this many bytes of ids and connections (a bulk action's cap with room). */
const CALL_BODY_BYTES_MAX = 1024 * 1024;
/** Past the keeper's own body deadline, as a forwarded write waits. */
const ANSWER_MARGIN_MS = 1_000;

export interface ClusterReadsOptions {
  nodeId: string;
  /** CLUSTER_PARTITIONS */
  partitions: number;
  secret: string;
  config: Pick<Config, 'trustedProxies' | 'bodyTimeoutMs'>;
  /** Whether this node answers partition `p`'s reads itself now. */
  answersHere(partition: number): boolean;
  /** The other nodes keeping partition `p`, in the order to ask them. */
  keepersElsewhere(partition: number): ForwardTarget[];
  /** This node's application, over its engine. */
  app: { handle(request: Request): Promise<Response> };
  engine: Engine;
  /** A write about partition `key`, to its writer (answered here when this node writes it); `body`: instead of the request's own. */
  toWriter(key: string, request: Request, body: string | undefined): Promise<Response>;
}

/** The front's links, one per partition; `server`: this node's, which the requests arrive through. */
export function partitionLinks(options: ClusterReadsOptions, server: PeerSource): FrontLink[] {
  return Array.from({ length: options.partitions }, (_, partition) => new PartitionLink(partition, options, server));
}

/** Where partition `p`'s reads are answered now: `here`, or the first other node keeping it (the shards' front groups by it). */
export function placeOfPartition(options: Pick<ClusterReadsOptions, 'answersHere' | 'keepersElsewhere'>, partition: number): string {
  if (options.answersHere(partition)) return 'here';
  return options.keepersElsewhere(partition)[0]?.node ?? `nobody:${partition}`;
}

class PartitionLink implements FrontLink {
  constructor(
    private readonly partition: number,
    private readonly options: ClusterReadsOptions,
    private readonly server: PeerSource,
  ) {}

  request(request: Request, client: ForwardedClient, { body, merge, covering }: FrontRequestOptions = {}): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (routeAnswerer(request.method, pathname) === 'owner') {
      const text = body === undefined || body === null ? undefined : new TextDecoder().decode(body);
      return this.options.toWriter(`p.${this.partition}`, request, text).catch(retryLater);
    }
    const partitions = [...(covering ?? [this.partition])];
    const scope: ReadScope = { partitions, partitionCount: this.options.partitions, ...(merge === undefined ? {} : { mergeNowMs: merge.nowMs }) };
    if (partitions.every((partition) => this.options.answersHere(partition))) return this.answerHere(request, client, scope);
    return this.askKeepers(partitions, (target) => forwardRequest(request, this.server, target, { secret: this.options.secret, config: this.options.config, scope }));
  }

  call(call: ShardCall): Promise<unknown> {
    if (call.what !== 'locate' && call.what !== 'locateJobs') return Promise.reject(new Error(`a cluster partition answers no ${call.what} call`));
    const partitions = [...new Set(call.connectionIds.map((id) => partitionOf(id, this.options.partitions)))];
    if (partitions.every((partition) => this.options.answersHere(partition))) return Promise.resolve(answerLocate(this.options.engine, call));
    return this.askKeepers(partitions, (target) => callKeeper(target, call, this.options)).then(async (answer) => {
      const body = (await answer.json().catch(() => null)) as { value?: unknown; error?: { message?: string } } | null;
      if (answer.status === 200 && body !== null && 'value' in body) return body.value;
      throw retryShortly(`the node keeping these connections could not say where the target is (${body?.error?.message ?? `answered ${answer.status}`}); retry shortly`);
    });
  }

  /** The read answered by this node's application for the scope's connections only, as the client the front resolved. */
  private answerHere(request: Request, client: ForwardedClient, scope: ReadScope): Promise<Response> {
    const scoped = new Request(request.url, { method: request.method, headers: request.headers, signal: request.signal });
    vouchForClient(scoped, client);
    scopeRead(scoped, scope);
    return this.options.app.handle(scoped);
  }

  /**
   * `ask` sent to the first node keeping every partition named, then to the next while one
   * refuses the connection or no longer keeps them, until the body deadline has passed.
   */
  private async askKeepers(partitions: number[], ask: (target: ForwardTarget) => Promise<Response>): Promise<Response> {
    const keepers = keepingAll(partitions, this.options.keepersElsewhere);
    const names = partitions.map((partition) => `p.${partition}`).join(', ');
    if (keepers.length === 0) throw retryShortly(`no live node keeps ${names} right now; retry shortly`);
    const deadline = Date.now() + this.options.config.bodyTimeoutMs;
    let failure: DomainError | undefined;
    for (const target of keepers) {
      try {
        const answer = await ask(target);
        if (answer.status !== 503 || !answer.headers.has(NOT_KEEPER_HEADER)) return answer;
        await answer.body?.cancel();
        failure = retryShortly(`${target.node} no longer keeps ${names}; retry shortly`);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        failure = error;
      }
      if (Date.now() >= deadline) break;
    }
    return retryLater(failure);
  }
}

/** A 503 a client retries after a second (every 503 of a node carries Retry-After). */
function retryShortly(message: string): DomainError {
  return new DomainError('SERVICE_UNAVAILABLE', message, undefined, undefined, { 'retry-after': '1' });
}

/** A 503 on the way (a writer or keeper out of reach) as the shards' front answers it: with Retry-After, as every 503 of a node. */
function retryLater(error: unknown): never {
  if (!(error instanceof DomainError) || error.code !== 'SERVICE_UNAVAILABLE' || error.headers?.['retry-after'] !== undefined) throw error;
  throw new DomainError(error.code, error.message, error.details, error.extraBody, { 'retry-after': '1', ...error.headers });
}

/** The nodes keeping every one of `partitions`, in the order the first partition's keepers are asked in. */
function keepingAll(partitions: number[], keepersElsewhere: (partition: number) => ForwardTarget[]): ForwardTarget[] {
  const [first, ...rest] = partitions;
  const others = rest.map((partition) => new Set(keepersElsewhere(partition).map((keeper) => keeper.node)));
  return keepersElsewhere(first!).filter((keeper) => others.every((nodes) => nodes.has(keeper.node)));
}

/** A locate call sent to a keeper: its body's digest is signed with the call, so the signature cannot carry another body. */
async function callKeeper(target: ForwardTarget, call: LocateCall, options: Pick<ClusterReadsOptions, 'secret' | 'config' | 'nodeId'>): Promise<Response> {
  const body = JSON.stringify(call);
  const scope: ForwardScope = { bodySha256: sha256(body) };
  const signature = signForward(options.secret, 'POST', CLUSTER_CALL_PATH, { address: options.nodeId, host: '', https: false }, Date.now(), scope);
  const deadlineMs = options.config.bodyTimeoutMs + ANSWER_MARGIN_MS;
  try {
    return await fetch(target.url + CLUSTER_CALL_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [FORWARD_HEADER]: signature },
      body,
      signal: AbortSignal.timeout(deadlineMs),
    });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${deadlineMs} ms` : error instanceof Error ? error.message : String(error);
    throw retryShortly(`the node keeping these connections (${target.node}) is not reachable (${reason}); retry shortly`);
  }
}

/**
 * Another node's locate call, its signature already verified with `bodySha256`: answered from
 * this engine when it keeps every partition the call names, else 503 with NOT_KEEPER_HEADER.
 */
export async function answerCall(request: Request, bodySha256: string, engine: Engine, partitions: number, keepsHere: (partition: number) => boolean): Promise<Response> {
  const text = await request.text();
  if (text.length > CALL_BODY_BYTES_MAX || sha256(text) !== bodySha256) throw new DomainError('UNAUTHORIZED', 'the internal call does not match its signature');
  const call = parseCall(text);
  if (call === null) throw new DomainError('VALIDATION_ERROR', 'not a locate call');
  const missing = [...new Set(call.connectionIds.map((id) => partitionOf(id, partitions)))].filter((partition) => !keepsHere(partition));
  if (missing.length > 0) return notKeeper(missing);
  return Response.json({ value: answerLocate(engine, call) });
}

/** The 503 a node answers a signed read or call for partitions it does not keep (the asking node tries the next keeper). */
export function notKeeper(partitions: readonly number[]): never {
  const names = partitions.map((partition) => `p.${partition}`).join(', ');
  throw new DomainError('SERVICE_UNAVAILABLE', `this node does not keep ${names} now; retry shortly`, undefined, undefined, { 'retry-after': '1', [NOT_KEEPER_HEADER]: names });
}

/** The read scope of a signed forward, when it names a well-formed set of partitions of this cluster's count. */
export function readScopeOfForward(scope: ForwardScope | undefined, partitions: number): ReadScope | null {
  if (scope?.partitions === undefined) return null;
  if (scope.partitionCount !== partitions || scope.partitions.length === 0 || scope.partitions.some((partition) => partition >= partitions)) return null;
  return { partitions: scope.partitions, partitionCount: partitions, ...(scope.mergeNowMs === undefined ? {} : { mergeNowMs: scope.mergeNowMs }) };
}

function parseCall(text: string): LocateCall | null {
  try {
    const call = JSON.parse(text) as Record<string, unknown>;
    const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
    if (!strings(call.connectionIds)) return null;
    if (call.what === 'locate' && typeof call.method === 'string' && typeof call.pathname === 'string') {
      return { what: 'locate', method: call.method, pathname: call.pathname, connectionIds: call.connectionIds };
    }
    if (call.what === 'locateJobs' && strings(call.ids)) return { what: 'locateJobs', ids: call.ids, connectionIds: call.connectionIds };
    return null;
  } catch {
    return null;
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
