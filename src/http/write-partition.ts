/**
 * Which partition's writer a request that writes goes to (docs/cluster.md, "How it works"),
 * decided on the node where it arrives from its own replica:
 *
 * - ingest, the agent's acknowledgement and its capabilities: the partition of the API
 *   key's connection (the accounts replica resolves the key);
 * - one job's command (revoke, retry, run now, delete, kill): the partition of the
 *   connection holding the job; a queue's or a worker's control: the partition of the
 *   connection holding it; a task's rate limit: `connectionInBody`;
 * - a bulk action: `bulk` (the front splits its ids by owner);
 * - an alert rule's or channel's edit, deletion or test: the partition of the connection
 *   holding it; creating one: `connectionInBody` (the front reads `connectionId` from the
 *   body, connectionKeyOfBody), since alert records are the connection's;
 * - a marker: with an API key, the key's connection's partition; with a session,
 *   `connectionInBody`; deleting one: the partition of the connection holding it;
 * - every other write (login, logout, users, connections, a backup): the accounts partition.
 *
 * `local` means no writer can be named (an unknown key or job): the node answers it
 * itself, and the application refuses it without writing (401, 404).
 */
import type { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import type { Engine } from '../../actors/engine.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { bearerToken } from './api-key.ts';
import { FORM_BODY_BYTES_MAX } from './read-body.ts';

export type WriteTarget = { kind: 'partition'; key: string } | { kind: 'bulk' } | { kind: 'connectionInBody' } | { kind: 'local' };

/** Same names as cluster/nats-cluster.ts (not imported: a single node loads no cluster module). */
export const ACCOUNTS_PARTITION_KEY = 'accounts';
export const connectionPartitionKey = (connectionId: string, partitions: number): string => `p.${partitionOf(connectionId, partitions)}`;

const KEYED_PATHS = new Set(['POST /api/ingest', 'POST /api/agent/commands/ack', 'PUT /api/agent/capabilities']);
const JOB_ACTION = /^\/api\/jobs\/([^/]+)\/(?:revoke|retry|promote|delete|kill)$/;
const QUEUE_CONTROL = /^\/api\/queues\/([^/]+)\/(?:pause|resume|clean|retry-failed|concurrency)$/;
const WORKER_CONTROL = /^\/api\/workers\/([^/]+)\/(?:quiet|stop|pool)$/;
const BULK_ACTION = /^\/api\/jobs\/bulk\/(?:revoke|retry)$/;
/** creates that name their connection in the body: an alert rule or channel, a task's rate limit */
const CONNECTION_IN_BODY = new Set(['/api/alert-rules', '/api/alert-channels', '/api/tasks/rate-limit']);
const ALERT_BY_ID = /^\/api\/alert-(rules|channels)\/([^/]+)(?:\/test)?$/;
const MARKER_BY_ID = /^\/api\/markers\/([^/]+)$/;

export function writeTarget(request: Request, pathname: string, engine: Engine, partitions: number): WriteTarget {
  if (KEYED_PATHS.has(`${request.method} ${pathname}`)) {
    const token = bearerToken(request);
    const connection = token === null ? undefined : engine.accounts.connectionByKey(token);
    return connection === undefined ? { kind: 'local' } : { kind: 'partition', key: connectionPartitionKey(connection.id, partitions) };
  }
  if (request.method === 'POST' && pathname === '/api/markers') {
    const token = bearerToken(request);
    if (token === null) return { kind: 'connectionInBody' };
    const connection = engine.accounts.connectionByKey(token);
    return connection === undefined ? { kind: 'local' } : { kind: 'partition', key: connectionPartitionKey(connection.id, partitions) };
  }
  if (request.method === 'POST' && BULK_ACTION.test(pathname)) return { kind: 'bulk' };
  if (request.method === 'POST' && CONNECTION_IN_BODY.has(pathname)) return { kind: 'connectionInBody' };
  const target = connectionOfTarget(request.method, pathname, engine);
  if (target !== null) return partitionOrLocal(target, partitions);
  return { kind: 'partition', key: ACCOUNTS_PARTITION_KEY };
}

/**
 * The connection holding what a write by id acts on (an alert rule's or channel's edit,
 * deletion or test, a marker's deletion, one job's command, a queue's or a worker's control), looked for among
 * `connectionIds` in their order (default: every connection of the engine); undefined when
 * none holds it, null for a request that names no such target. A shard's front asks the
 * shards this to send such a write to the one shard keeping its target (src/shards/).
 */
export function connectionOfTarget(method: string, pathname: string, engine: Engine, connectionIds?: Iterable<string>): string | undefined | null {
  const alert = method === 'GET' ? null : ALERT_BY_ID.exec(pathname);
  if (alert !== null && alert[2] !== 'preview') {
    const what = alert[1] === 'rules' ? 'rules' : 'channels';
    const id = safelyDecoded(alert[2]!);
    return connectionHolding(engine, connectionIds, (actor) => actor.alerts[what].has(id));
  }
  const marker = method === 'DELETE' ? MARKER_BY_ID.exec(pathname) : null;
  if (marker !== null) {
    const id = safelyDecoded(marker[1]!);
    return connectionHolding(engine, connectionIds, (actor) => actor.markers.has(id));
  }
  if (method !== 'POST') return null;
  const job = JOB_ACTION.exec(pathname);
  if (job !== null) {
    const id = safelyDecoded(job[1]!);
    return connectionHolding(engine, connectionIds, (actor) => actor.jobs.rowOf(id) >= 0);
  }
  const queue = QUEUE_CONTROL.exec(pathname);
  if (queue !== null) {
    const id = safelyDecoded(queue[1]!);
    return connectionHolding(engine, connectionIds, (actor) => actor.queues.getById(id) !== undefined);
  }
  const worker = WORKER_CONTROL.exec(pathname);
  if (worker !== null) {
    const id = safelyDecoded(worker[1]!);
    return connectionHolding(engine, connectionIds, (actor) => [...actor.workers.values()].some((each) => each.id === id));
  }
  return null;
}

function partitionOrLocal(connectionId: string | undefined, partitions: number): WriteTarget {
  return connectionId === undefined ? { kind: 'local' } : { kind: 'partition', key: connectionPartitionKey(connectionId, partitions) };
}

/** The first of `connectionIds` (default: all of the engine's) whose actor in this engine holds what `holds` looks for. */
function connectionHolding(engine: Engine, connectionIds: Iterable<string> | undefined, holds: (actor: ConnectionActor) => boolean): string | undefined {
  for (const connectionId of connectionIds ?? engine.connectionIds()) {
    const actor = engine.connection(connectionId);
    if (actor !== undefined && holds(actor)) return connectionId;
  }
  return undefined;
}

/** A question about where targets live, asked of whoever keeps the connections named (a shard, a cluster node keeping their partitions). */
export type LocateCall = { what: 'locate'; method: string; pathname: string; connectionIds: string[] } | { what: 'locateJobs'; ids: string[]; connectionIds: string[] };

/** `locate`: the connection keeping the write's target, or null; `locateJobs`: for each id, the connection keeping its job, or null. */
export function answerLocate(engine: Engine, call: LocateCall): string | null | Array<string | null> {
  if (call.what === 'locate') return connectionOfTarget(call.method, call.pathname, engine, call.connectionIds) ?? null;
  return call.ids.map((id) => connectionOfJob(engine, id, call.connectionIds) ?? null);
}

/** The connection holding job `id` in this engine, the first of `connectionIds` (default: all of them); undefined when none does. */
export function connectionOfJob(engine: Engine, id: string, connectionIds?: Iterable<string>): string | undefined {
  return connectionHolding(engine, connectionIds, (actor) => actor.jobs.rowOf(id) >= 0);
}

/**
 * The partition of the connection a create body names (read from a copy of the request);
 * the accounts partition when the body names none this replica knows, whose writer then
 * answers the 400 or 404 as any node would.
 */
export async function connectionKeyOfBody(copy: Request, engine: Engine, partitions: number): Promise<string> {
  try {
    // the alert routes' cap: no more is read to route one
    const text = await textWithin(copy, FORM_BODY_BYTES_MAX);
    if (text !== null) {
      const { connectionId } = JSON.parse(text) as { connectionId?: unknown };
      if (typeof connectionId === 'string' && engine.connection(connectionId) !== undefined) return connectionPartitionKey(connectionId, partitions);
    }
  } catch {
    // not JSON: the writer answers it
  }
  return ACCOUNTS_PARTITION_KEY;
}

/** The body as text when it is at most `bytesMax` bytes; null (having read no further) when it is longer. */
export async function textWithin(request: Request, bytesMax: number): Promise<string | null> {
  if (request.body === null) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > bytesMax) {
      // not awaited: cancelling one branch of a cloned (teed) body settles only once the
      // other branch, the request passed on, is read or cancelled too
      void reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** A malformed escape finds no job (the application answers it as it would anywhere). */
function safelyDecoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
