/**
 * Who answers each route when the connections live on shards (docs/architecture.md,
 * "Shards"), in one table that test/shards/shard-routes.test.ts checks against the app's own
 * route list, so a new route cannot be left out:
 *
 * - `front`: the HTTP thread answers with its own application: accounts (sign-in, users,
 *   teams and their members, their saved views of the jobs list, connections created and
 *   deleted), the live stream (its hubs
 *   are there), the backup, the documents and the dashboard's files;
 * - `apiKey`: the shard keeping the API key's connection (an unknown key: the front, which
 *   answers the 401 as anyone would);
 * - `bodyConnection`: the shard keeping the connection the JSON body names (creating an
 *   alert rule or channel, a task's rate limit);
 * - `keyOrBodyConnection`: with a known API key, as `apiKey`; else as `bodyConnection` (a
 *   deploy marker, added by an agent's key or by a person);
 * - `target`: a write about one job, queue, worker, alert rule or channel by its id: the
 *   shards keeping the user's connections are asked which connection keeps it, and the one
 *   shard keeping it answers (so the change and its audit entry are written once, by the
 *   writer of that connection, as the cluster does); none: a shard of the user's answers the 404;
 * - `bulk`: a bulk action's ids grouped by the shard keeping each job (the shards of the
 *   user's connections are asked), one bulk action per shard, the results merged in the
 *   request's order (src/http/bulk-split.ts, as the cluster splits one by writer);
 * - `split`: every shard keeping one of the user's connections (narrowed by a
 *   `connectionId` query when the route has one), answered concurrently and merged
 *   (shard-merge.ts); `firstFound` for a read about one job, queue or command whose
 *   connection the front cannot know: the shard that has it answers, the others say 404;
 * - `everywhere`: the front's application and every shard, merged (the audit log: each store
 *   keeps the entries of the changes it wrote).
 *
 * A request matching no route goes to the front (its application answers the 404).
 */
import { routeTable } from '../http/route-table.ts';
import { UI_PAGE_PATHS } from '../routes/ui.ts';
import {
  mergeAlertOverviews,
  mergeAuditPages,
  mergeConnectionItems,
  mergeConnectionLists,
  mergeCursorPages,
  mergeMarkers,
  mergeMe,
  mergeNumberedPages,
  mergeSeries,
  mergeTaskTables,
  type Merger,
} from './shard-merge.ts';

export type ShardRoute =
  | { by: 'front' }
  | { by: 'apiKey' }
  | { by: 'bodyConnection' }
  | { by: 'keyOrBodyConnection' }
  | { by: 'target' }
  | { by: 'bulk' }
  | { by: 'split'; answer: Merger | 'firstFound' }
  | { by: 'everywhere'; answer: Merger };

const front: ShardRoute = { by: 'front' };
const apiKey: ShardRoute = { by: 'apiKey' };
const bodyConnection: ShardRoute = { by: 'bodyConnection' };
const target: ShardRoute = { by: 'target' };
const firstFound: ShardRoute = { by: 'split', answer: 'firstFound' };
const merged = (merge: Merger): ShardRoute => ({ by: 'split', answer: merge });

export const SHARD_ROUTES: Readonly<Record<string, ShardRoute>> = {
  'GET /api/health': front,
  'GET /metrics': front,
  'GET /docs/errors': front,
  'GET /openapi.json': front,
  'GET /docs': front,
  'GET /docs/assets/:name': front,
  'POST /api/auth/login': front,
  'POST /api/auth/logout': front,
  'GET /api/auth/me': merged(mergeMe),
  'GET /api/auth/methods': front,
  'GET /api/auth/oidc/start': front,
  'GET /api/auth/oidc/callback': front,
  'POST /api/auth/password': front,
  'POST /api/auth/set-password': front,
  'GET /api/users': front,
  'POST /api/users': front,
  'POST /api/users/:id/disable': front,
  'POST /api/users/:id/enable': front,
  'DELETE /api/users/:id': front,
  'POST /api/users/:id/password-reset': front,
  'GET /api/teams': front,
  'POST /api/teams': front,
  'GET /api/teams/:id': front,
  'PATCH /api/teams/:id': front,
  'DELETE /api/teams/:id': front,
  'GET /api/teams/:id/members': front,
  'POST /api/teams/:id/members': front,
  'PATCH /api/teams/:id/members/:userId': front,
  'DELETE /api/teams/:id/members/:userId': front,
  // saved views are the teams' (accounts records); saving one checks its filters without any job data
  'GET /api/views': front,
  'POST /api/views': front,
  'PATCH /api/views/:id': front,
  'DELETE /api/views/:id': front,
  'POST /api/connections': front,
  'GET /api/connections': merged(mergeConnectionLists),
  'DELETE /api/connections/:id': front,
  'POST /api/ingest': apiKey,
  'GET /api/jobs': merged(mergeCursorPages),
  'GET /api/jobs/:id': firstFound,
  // a workflow lives in one connection (relations name jobs of the job's own): the shard keeping the job has all of it
  'GET /api/jobs/:id/workflow': firstFound,
  'GET /api/queues': merged(mergeNumberedPages),
  'GET /api/queues/:id': firstFound,
  'GET /api/workers': merged(mergeNumberedPages),
  'POST /api/jobs/bulk/revoke': { by: 'bulk' },
  'POST /api/jobs/bulk/retry': { by: 'bulk' },
  'POST /api/jobs/:id/revoke': target,
  'POST /api/jobs/:id/retry': target,
  'POST /api/jobs/:id/promote': target,
  'POST /api/jobs/:id/delete': target,
  'POST /api/jobs/:id/kill': target,
  'POST /api/queues/:id/pause': target,
  'POST /api/queues/:id/resume': target,
  'POST /api/queues/:id/clean': target,
  'POST /api/queues/:id/retry-failed': target,
  'POST /api/queues/:id/concurrency': target,
  'GET /api/queues/:id/clean-estimate': firstFound,
  'POST /api/workers/:id/quiet': target,
  'POST /api/workers/:id/stop': target,
  'POST /api/workers/:id/pool': target,
  'POST /api/tasks/rate-limit': bodyConnection,
  'GET /api/commands/:id': firstFound,
  'GET /api/capabilities': merged(mergeConnectionItems),
  'GET /api/alert-channels': merged(mergeConnectionItems),
  'POST /api/alert-channels': bodyConnection,
  'DELETE /api/alert-channels/:id': target,
  'POST /api/alert-channels/:id/test': target,
  'GET /api/alert-rules': merged(mergeConnectionItems),
  'POST /api/alert-rules': bodyConnection,
  'POST /api/alert-rules/preview': bodyConnection,
  'PATCH /api/alert-rules/:id': target,
  'DELETE /api/alert-rules/:id': target,
  'GET /api/alerts': merged(mergeAlertOverviews),
  'GET /api/audit': { by: 'everywhere', answer: mergeAuditPages },
  'GET /api/metrics/tasks': merged(mergeTaskTables),
  'GET /api/metrics/series': merged(mergeSeries),
  'GET /api/markers': merged(mergeMarkers),
  'POST /api/markers': { by: 'keyOrBodyConnection' },
  'DELETE /api/markers/:id': target,
  'GET /api/agent/connection': apiKey,
  'GET /api/agent/commands': apiKey,
  'POST /api/agent/commands/ack': apiKey,
  'PUT /api/agent/capabilities': apiKey,
  // the hubs are the front's, fed by the shards
  'GET /api/events/stream': front,
  'POST /api/admin/backup': front,
  ...Object.fromEntries(UI_PAGE_PATHS.map((path) => [`GET ${path}`, front])),
  'GET /assets/:name': front,
};

const lookup = routeTable(SHARD_ROUTES);

export function shardRoute(method: string, pathname: string): ShardRoute {
  return lookup(method, pathname) ?? front;
}
