/**
 * Which partition's writer a request that writes goes to (docs/cluster.md, "How it works"),
 * decided on the node where it arrives from its own replica:
 *
 * - ingest and the agent's acknowledgement: the partition of the API key's connection
 *   (the accounts replica resolves the key);
 * - one job's revoke or retry: the partition of the connection holding the job;
 * - a bulk action: `bulk` (the front splits its ids by owner);
 * - every other write (login, logout, users, connections, a backup): the accounts partition.
 *
 * `local` means no writer can be named (an unknown key or job): the node answers it
 * itself, and the application refuses it without writing (401, 404).
 */
import type { Engine } from '../../actors/engine.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { bearerToken } from './api-key.ts';

export type WriteTarget = { kind: 'partition'; key: string } | { kind: 'bulk' } | { kind: 'local' };

/** Same names as cluster/nats-cluster.ts (not imported: a single node loads no cluster module). */
export const ACCOUNTS_PARTITION_KEY = 'accounts';
export const connectionPartitionKey = (connectionId: string, partitions: number): string => `p.${partitionOf(connectionId, partitions)}`;

const KEYED_PATHS = new Set(['/api/ingest', '/api/agent/commands/ack']);
const JOB_ACTION = /^\/api\/jobs\/([^/]+)\/(?:revoke|retry)$/;
const BULK_ACTION = /^\/api\/jobs\/bulk\/(?:revoke|retry)$/;

export function writeTarget(request: Request, pathname: string, engine: Engine, partitions: number): WriteTarget {
  if (request.method === 'POST' && KEYED_PATHS.has(pathname)) {
    const token = bearerToken(request);
    const connection = token === null ? undefined : engine.accounts.connectionByKey(token);
    return connection === undefined ? { kind: 'local' } : { kind: 'partition', key: connectionPartitionKey(connection.id, partitions) };
  }
  if (request.method === 'POST' && BULK_ACTION.test(pathname)) return { kind: 'bulk' };
  const job = request.method === 'POST' ? JOB_ACTION.exec(pathname) : null;
  if (job !== null) {
    const connectionId = connectionOfJob(engine, safelyDecoded(job[1]!));
    return connectionId === undefined ? { kind: 'local' } : { kind: 'partition', key: connectionPartitionKey(connectionId, partitions) };
  }
  return { kind: 'partition', key: ACCOUNTS_PARTITION_KEY };
}

/** The connection holding job `id` in this node's replica; undefined when none does. */
export function connectionOfJob(engine: Engine, id: string): string | undefined {
  for (const connectionId of engine.connectionIds()) {
    if (engine.connection(connectionId)?.jobs.get(id) !== undefined) return connectionId;
  }
  return undefined;
}

/** A malformed escape finds no job (the application answers it as it would anywhere). */
function safelyDecoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
