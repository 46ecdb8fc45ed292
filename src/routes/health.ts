import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';

/** GET /api/health, no authentication; 503 once the engine has halted on a log failure. */
export function healthRoutes({ engine }: AppDeps) {
  return new Elysia({ name: 'health' }).get('/api/health', ({ set }) => {
    const healthy = !engine.halted;
    if (!healthy) set.status = 503;
    return { status: healthy ? 'ok' : 'unavailable', timestamp: new Date().toISOString() };
  });
}
