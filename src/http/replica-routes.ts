/**
 * Which node answers each route in cluster mode (docs/cluster.md, "Replicas"), in one
 * table that test/http/replica-routes.test.ts checks against the app's own route list:
 *
 * - `replica`: reads only (no record committed, nothing of the owner's store used), so a
 *   standby whose replica has caught up answers it itself;
 * - `owner`: commits records, or needs the writer's store (a backup): always forwarded;
 * - `node`: about this node itself, answered where it arrives (health, its metrics).
 *
 * A request that matches no route is forwarded (the owner answers the 404): writing is
 * the default, reading the listed exception. HEAD is classified as GET.
 */
import { UI_PAGE_PATHS } from '../routes/ui.ts';
import { routeTable } from './route-table.ts';

export type RouteAnswerer = 'replica' | 'owner' | 'node';

export const ROUTE_ANSWERERS: Readonly<Record<string, RouteAnswerer>> = {
  'GET /api/health': 'node',
  'GET /metrics': 'node',
  'GET /docs/errors': 'replica',
  'GET /openapi.json': 'replica',
  'GET /docs': 'replica',
  'GET /docs/assets/:name': 'replica',
  'POST /api/auth/login': 'owner',
  'POST /api/auth/logout': 'owner',
  'GET /api/auth/me': 'replica',
  'GET /api/auth/methods': 'replica',
  'GET /api/auth/oidc/start': 'replica',
  // makes the user, their memberships and the session: a write, though a GET (the provider's redirect)
  'GET /api/auth/oidc/callback': 'owner',
  'POST /api/auth/password': 'owner',
  'POST /api/auth/set-password': 'owner',
  'GET /api/users': 'replica',
  'POST /api/users': 'owner',
  'POST /api/users/:id/disable': 'owner',
  'POST /api/users/:id/enable': 'owner',
  'DELETE /api/users/:id': 'owner',
  'POST /api/users/:id/password-reset': 'owner',
  'GET /api/teams': 'replica',
  'POST /api/teams': 'owner',
  'GET /api/teams/:id': 'replica',
  'PATCH /api/teams/:id': 'owner',
  'DELETE /api/teams/:id': 'owner',
  'GET /api/teams/:id/members': 'replica',
  'POST /api/teams/:id/members': 'owner',
  'PATCH /api/teams/:id/members/:userId': 'owner',
  'DELETE /api/teams/:id/members/:userId': 'owner',
  // saved views are records of the accounts, written by the accounts partition's writer
  'GET /api/views': 'replica',
  'POST /api/views': 'owner',
  'PATCH /api/views/:id': 'owner',
  'DELETE /api/views/:id': 'owner',
  'POST /api/connections': 'owner',
  'GET /api/connections': 'replica',
  'DELETE /api/connections/:id': 'owner',
  'POST /api/ingest': 'owner',
  'GET /api/jobs': 'replica',
  'GET /api/jobs/:id': 'replica',
  'GET /api/jobs/:id/workflow': 'replica',
  'GET /api/queues': 'replica',
  'GET /api/queues/:id': 'replica',
  'GET /api/workers': 'replica',
  'POST /api/jobs/bulk/revoke': 'owner',
  'POST /api/jobs/bulk/retry': 'owner',
  'POST /api/jobs/:id/revoke': 'owner',
  'POST /api/jobs/:id/retry': 'owner',
  'POST /api/jobs/:id/promote': 'owner',
  'POST /api/jobs/:id/delete': 'owner',
  'POST /api/jobs/:id/kill': 'owner',
  // a queue's, worker's or task's controls: written by the writer of the target's connection (write-partition.ts)
  'POST /api/queues/:id/pause': 'owner',
  'POST /api/queues/:id/resume': 'owner',
  'POST /api/queues/:id/clean': 'owner',
  'POST /api/queues/:id/retry-failed': 'owner',
  'POST /api/queues/:id/concurrency': 'owner',
  'GET /api/queues/:id/clean-estimate': 'replica',
  'POST /api/workers/:id/quiet': 'owner',
  'POST /api/workers/:id/stop': 'owner',
  'POST /api/workers/:id/pool': 'owner',
  'POST /api/tasks/rate-limit': 'owner',
  'GET /api/commands/:id': 'replica',
  'GET /api/capabilities': 'replica',
  // alerts: reads from the replica; every write goes to the connection's partition writer (write-partition.ts),
  // which is also the node that evaluates and sends
  'GET /api/alert-channels': 'replica',
  'POST /api/alert-channels': 'owner',
  'DELETE /api/alert-channels/:id': 'owner',
  'POST /api/alert-channels/:id/test': 'owner',
  'GET /api/alert-rules': 'replica',
  'POST /api/alert-rules': 'owner',
  'POST /api/alert-rules/preview': 'owner',
  'PATCH /api/alert-rules/:id': 'owner',
  'DELETE /api/alert-rules/:id': 'owner',
  'GET /api/alerts': 'replica',
  'GET /api/audit': 'replica',
  // task metrics are in every replica's records and snapshots; a marker is a record of its connection's partition
  'GET /api/metrics/tasks': 'replica',
  'GET /api/metrics/series': 'replica',
  'GET /api/markers': 'replica',
  'POST /api/markers': 'owner',
  'DELETE /api/markers/:id': 'owner',
  // an agent's poll reads the pending commands; its acknowledgement is the write
  'GET /api/agent/connection': 'replica',
  'GET /api/agent/commands': 'replica',
  'POST /api/agent/commands/ack': 'owner',
  'PUT /api/agent/capabilities': 'owner',
  // fed by the local replica, so it survives the owner's death
  'GET /api/events/stream': 'replica',
  // a consistent snapshot of the writer's store
  'POST /api/admin/backup': 'owner',
  ...Object.fromEntries(UI_PAGE_PATHS.map((path) => [`GET ${path}`, 'replica' as const])),
  'GET /assets/:name': 'replica',
};

const lookup = routeTable(ROUTE_ANSWERERS);

/** Who answers `method pathname`; a static segment wins over a parameter (`/api/jobs/bulk/retry` is not `/api/jobs/:id/retry`). */
export function routeAnswerer(method: string, pathname: string): RouteAnswerer {
  return lookup(method, pathname) ?? 'owner';
}
