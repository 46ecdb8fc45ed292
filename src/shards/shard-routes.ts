/**
 * Who answers each route when the connections live on shards (docs/architecture.md,
 * "Shards"), in one table that test/shards/shard-routes.test.ts checks against the app's own
 * route list, so a new route cannot be left out:
 *
 * - `front`: the HTTP thread answers with its own application: accounts (login, users,
 *   connections created and deleted), the live stream (its hubs are there), the backup,
 *   the documents and the dashboard's files;
 * - `apiKey`: the shard keeping the API key's connection (an unknown key: the front, which
 *   answers the 401 as anyone would);
 * - `bodyConnection`: the shard keeping the connection the JSON body names (creating an
 *   alert rule or channel);
 * - `split`: every shard keeping one of the user's connections (narrowed by a
 *   `connectionId` query when the route has one), answered concurrently and merged
 *   (shard-merge.ts); `firstFound` for a route about one job or alert whose connection the
 *   front cannot know: the shard that has it answers, the others say 404.
 *
 * A request matching no route goes to the front (its application answers the 404).
 */
import { routeTable } from '../http/route-table.ts';
import { UI_PAGE_PATHS } from '../routes/ui.ts';
import {
  mergeAlertOverviews,
  mergeBulkResults,
  mergeConnectionItems,
  mergeConnectionLists,
  mergeCursorPages,
  mergeMe,
  mergeNumberedPages,
  type Merger,
} from './shard-merge.ts';

export type ShardRoute = { by: 'front' } | { by: 'apiKey' } | { by: 'bodyConnection' } | { by: 'split'; answer: Merger | 'firstFound' };

const front: ShardRoute = { by: 'front' };
const apiKey: ShardRoute = { by: 'apiKey' };
const bodyConnection: ShardRoute = { by: 'bodyConnection' };
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
  'POST /api/users': front,
  'POST /api/connections': front,
  'GET /api/connections': merged(mergeConnectionLists),
  'DELETE /api/connections/:id': front,
  'POST /api/ingest': apiKey,
  'GET /api/jobs': merged(mergeCursorPages),
  'GET /api/jobs/:id': firstFound,
  'GET /api/queues': merged(mergeNumberedPages),
  'GET /api/workers': merged(mergeNumberedPages),
  'POST /api/jobs/bulk/revoke': merged(mergeBulkResults),
  'POST /api/jobs/bulk/retry': merged(mergeBulkResults),
  'POST /api/jobs/:id/revoke': firstFound,
  'POST /api/jobs/:id/retry': firstFound,
  'GET /api/alert-channels': merged(mergeConnectionItems),
  'POST /api/alert-channels': bodyConnection,
  'DELETE /api/alert-channels/:id': firstFound,
  'POST /api/alert-channels/:id/test': firstFound,
  'GET /api/alert-rules': merged(mergeConnectionItems),
  'POST /api/alert-rules': bodyConnection,
  'POST /api/alert-rules/preview': bodyConnection,
  'PATCH /api/alert-rules/:id': firstFound,
  'DELETE /api/alert-rules/:id': firstFound,
  'GET /api/alerts': merged(mergeAlertOverviews),
  'GET /api/agent/connection': apiKey,
  'GET /api/agent/commands': apiKey,
  'POST /api/agent/commands/ack': apiKey,
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
