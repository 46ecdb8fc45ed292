import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';

/**
 * GET /api/health, no authentication; 503 once the engine has halted on a log failure. In
 * cluster mode the node's front answers it (src/http/cluster-front.ts: the partitions it
 * writes, its replica); this route names the node if it is reached there. With shards it
 * names each and its state, and is 503 while one is not ready: that shard's connections are
 * answered 503 meanwhile.
 */
export function healthRoutes({ engine, clusterNode, shards }: AppDeps) {
  const role = clusterNode === undefined ? {} : { role: 'node', node: clusterNode };
  return new Elysia({ name: 'health' }).get('/api/health', async ({ set }) => {
    const shardStates = shards === undefined ? undefined : await shards.health();
    const healthy = !engine.halted && (shardStates?.every((shard) => shard.state === 'ready') ?? true);
    if (!healthy) set.status = 503;
    return { status: healthy ? 'ok' : 'unavailable', timestamp: new Date().toISOString(), ...role, ...(shardStates === undefined ? {} : { shards: shardStates }) };
  });
}
