/**
 * How the front merges the answers of several shards to a read over several connections,
 * so that the answer is the one a single engine holding every connection would give
 * (docs/architecture.md, "Reads across shards"; test/shards/ compares them):
 *
 * - a cursor page (jobs): each shard answers the page after the same position with each
 *   item's cursor; the pages are merged by (sort key, id), the first `limit` taken, and the
 *   next cursor is the last item's, a position in the one order every shard shares, so no
 *   cursor needs to carry a position per shard;
 * - a numbered page (queues, workers): each shard answers every item up to the page's end
 *   with its sort key; they are merged, and the page cut from the merge;
 * - lists in connection order (connections, alert rules and channels, the alerts
 *   overview): each shard lists its own connections' items; they are put in the order of the
 *   user's connections, as one engine walks them;
 * - totals are summed;
 * - audit pages (the front's and every shard's, newest first): merged by (time, id), an entry
 *   two stores hold kept once, the cursor the last entry's as one store makes it.
 */
import { cursorPosition } from '../../actors/jobs/cursor.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { compareInOrder, type SortOrder, type SortValue } from '../../actors/jobs/sorted-index.ts';
import { RECENT_ALERTS_MAX } from '../../actors/services/alert-service.ts';
import { auditCursor, type AuditPage } from '../../actors/services/audit-service.ts';

/** What the front knows of the user whose read it merges. */
export interface MergeContext {
  /** the user's connection ids as the accounts list them: the order one engine reads connections in */
  connectionOrder: readonly string[];
  /** the same, oldest first: the order of the connections list */
  connectionListOrder: readonly string[];
}

/** Merges the parsed bodies of the shards' 200 answers, in shard order. */
export type Merger = (bodies: unknown[], context: MergeContext) => unknown;

interface CursorPageBody {
  data: unknown[];
  pagination: { nextCursor: string | null; limit: number; total: number };
  itemCursors: string[];
}

/** GET /api/jobs: pages after one position merged by (key, id); ties between shards by shard order. */
export const mergeCursorPages: Merger = (bodies) => {
  const pages = bodies as CursorPageBody[];
  const limit = pages[0]!.pagination.limit;
  const heads = pages.map(() => 0);
  const positions = pages.map((page) => page.itemCursors.map(cursorPosition));
  const data: unknown[] = [];
  let lastCursor: string | null = null;
  while (data.length < limit) {
    let best = -1;
    for (let shard = 0; shard < pages.length; shard++) {
      const at = heads[shard]!;
      if (at >= pages[shard]!.data.length) continue;
      if (best < 0) {
        best = shard;
        continue;
      }
      const a = positions[shard]![at]!;
      const b = positions[best]![heads[best]!]!;
      if (compareInOrder(a.sortOrder, a.key, a.id, b.key, b.id) < 0) best = shard;
    }
    if (best < 0) break;
    const at = heads[best]!;
    data.push(pages[best]!.data[at]);
    lastCursor = pages[best]!.itemCursors[at]!;
    heads[best] = at + 1;
  }
  const more = pages.some((page, shard) => heads[shard]! < page.data.length || page.pagination.nextCursor !== null);
  const total = pages.reduce((sum, page) => sum + page.pagination.total, 0);
  return { data, pagination: { nextCursor: more ? lastCursor : null, limit, total } };
};

interface NumberedPageBody {
  data: Array<{ id: string }>;
  pagination: { page: number; limit: number; total: number; totalPages: number };
  itemKeys: { sortOrder: SortOrder; keys: SortValue[] };
}

/** GET /api/queues, /api/workers: every shard's items through the page, merged, then the page cut. */
export const mergeNumberedPages: Merger = (bodies) => {
  const pages = bodies as NumberedPageBody[];
  const { page, limit } = pages[0]!.pagination;
  const order = pages[0]!.itemKeys.sortOrder;
  const items = pages.flatMap((body, shard) => body.data.map((item, at) => ({ item, key: body.itemKeys.keys[at]!, shard })));
  items.sort((a, b) => compareInOrder(order, a.key, a.item.id, b.key, b.item.id) || a.shard - b.shard);
  const total = pages.reduce((sum, body) => sum + body.pagination.total, 0);
  return {
    data: items.slice((page - 1) * limit, page * limit).map(({ item }) => item),
    pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
  };
};

/** Items of several shards in the order of their connections (stable within a connection). */
function inConnectionOrder<T>(lists: T[][], order: readonly string[], connectionOf: (item: T) => string): T[] {
  const rank = new Map(order.map((id, at) => [id, at]));
  const rankOf = (item: T): number => rank.get(connectionOf(item)) ?? order.length;
  return lists.flat().sort((a, b) => rankOf(a) - rankOf(b));
}

type ConnectionItem = { id: string };
type ItemOfConnection = { connectionId: string };

/** GET /api/connections: the user's connections, oldest first, each listed by the shard keeping it. */
export const mergeConnectionLists: Merger = (bodies, context) => ({
  data: inConnectionOrder(
    bodies.map((body) => (body as { data: ConnectionItem[] }).data),
    context.connectionListOrder,
    (connection) => connection.id,
  ),
});

/** GET /api/auth/me: the user (the same from every shard) and their connections as the list has them. */
export const mergeMe: Merger = (bodies, context) => ({
  ...(bodies[0] as object),
  connections: inConnectionOrder(
    bodies.map((body) => (body as { connections: ConnectionItem[] }).connections),
    context.connectionListOrder,
    (connection) => connection.id,
  ),
});

/** GET /api/alert-rules, /api/alert-channels: each connection's items, connection by connection. */
export const mergeConnectionItems: Merger = (bodies, context) => ({
  data: inConnectionOrder(
    bodies.map((body) => (body as { data: ItemOfConnection[] }).data),
    context.connectionOrder,
    (item) => item.connectionId,
  ),
});

type Alert = ItemOfConnection & { at: string };

/** GET /api/alerts: firing rules connection by connection; the newest transitions of all, at most RECENT_ALERTS_MAX. */
export const mergeAlertOverviews: Merger = (bodies, context) => {
  const overviews = bodies as Array<{ firing: Alert[]; recent: Alert[] }>;
  const firing = inConnectionOrder(
    overviews.map((overview) => overview.firing),
    context.connectionOrder,
    (alert) => alert.connectionId,
  );
  // one engine sorts (stably) the transitions it gathered connection by connection: newest first, then by connection
  const recent = inConnectionOrder(
    overviews.map((overview) => overview.recent),
    context.connectionOrder,
    (alert) => alert.connectionId,
  ).sort((a, b) => b.at.localeCompare(a.at));
  return { firing, recent: recent.slice(0, RECENT_ALERTS_MAX) };
};

/** GET /api/audit: the newest `limit` entries of every store's page, newest first (ties: the greater id first, as one log walks back). */
export const mergeAuditPages: Merger = (bodies) => {
  const pages = bodies as AuditPage[];
  const limit = pages[0]!.pagination.limit;
  const seen = new Set<string>();
  const entries = pages.flatMap((page) => page.data).filter((entry) => !seen.has(entry.id) && seen.add(entry.id) !== undefined);
  const atMs = new Map(entries.map((entry) => [entry.id, Date.parse(entry.at)]));
  entries.sort((a, b) => atMs.get(b.id)! - atMs.get(a.id)! || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const data = entries.slice(0, limit);
  const more = entries.length > limit || pages.some((page) => page.pagination.nextCursor !== null);
  const last = data.at(-1);
  return { data, pagination: { nextCursor: more && last !== undefined ? auditCursor({ atMs: atMs.get(last.id)!, id: last.id }) : null, limit } };
};

/** GET /api/markers: the markers of every shard by time; at the same time, in the order of their connections, as one engine sorts them. */
export const mergeMarkers: Merger = (bodies, context) => ({
  data: inConnectionOrder(
    bodies.map((body) => (body as { data: Array<ItemOfConnection & { at: string }> }).data),
    context.connectionOrder,
    (marker) => marker.connectionId,
  ).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)),
});

/**
 * GET /api/metrics/tasks and /series over connections kept on several shards: not merged
 * yet. A task's row and a series point add up the histograms of every connection before
 * their percentiles are taken, which the shards' answers (percentiles already taken) cannot
 * give; so the answer is a clear refusal naming what works (one connection, or one shard),
 * never a wrong figure.
 */
export const refuseTaskMetricsOverShards: Merger = () => {
  throw new DomainError(
    'INVALID_STATE',
    'task metrics over connections kept on several shards are not merged yet (WORKERS above 1): name one connection with connectionId',
  );
};
