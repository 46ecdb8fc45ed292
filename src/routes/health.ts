import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';

/**
 * GET /api/health, no authentication; 503 once the engine has halted on a log failure. In
 * cluster mode it also names the role (a standby answers from src/http/cluster-front.ts).
 */
export function healthRoutes({ engine, clusterNode }: AppDeps) {
  const role = clusterNode === undefined ? {} : { role: 'owner', node: clusterNode, owner: clusterNode };
  return new Elysia({ name: 'health' }).get('/api/health', ({ set }) => {
    const healthy = !engine.halted;
    if (!healthy) set.status = 503;
    return { status: healthy ? 'ok' : 'unavailable', timestamp: new Date().toISOString(), ...role };
  });
}
