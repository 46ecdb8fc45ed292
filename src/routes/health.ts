import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';

/**
 * GET /api/health, no authentication; 503 once the engine has halted on a log failure. In
 * cluster mode the node's front answers it (src/http/cluster-front.ts: the partitions it
 * writes, its replica); this route names the node if it is reached there.
 */
export function healthRoutes({ engine, clusterNode }: AppDeps) {
  const role = clusterNode === undefined ? {} : { role: 'node', node: clusterNode };
  return new Elysia({ name: 'health' }).get('/api/health', ({ set }) => {
    const healthy = !engine.halted;
    if (!healthy) set.status = 503;
    return { status: healthy ? 'ok' : 'unavailable', timestamp: new Date().toISOString(), ...role };
  });
}
