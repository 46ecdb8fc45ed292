import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { TIME_RANGES } from '../../actors/metrics/queue-metrics.ts';
import { pageOf } from '../../actors/queries/paged-list.ts';
import { toQueueView, type QueueView } from '../../actors/views/queue-view.ts';
import type { SortValue } from '../../actors/jobs/sorted-index.ts';
import type { AppDeps } from '../app-deps.ts';
import { dashboardUser } from '../http/dashboard-auth.ts';
import { model, validQuery } from '../http/validate.ts';
import { connectionIdParam, frameworkParam, limitParam, literals, sortOrderParam, pageParam } from './list-params.ts';

const QUEUE_SORT: Record<string, (queue: QueueView) => SortValue> = {
  name: (queue) => queue.name,
  depth: (queue) => queue.depth,
  consumers: (queue) => queue.consumers,
  throughput: (queue) => queue.throughput,
  failureRate: (queue) => queue.failureRate,
};

const QueueListParams = model(
  Type.Object({
    page: pageParam(),
    limit: limitParam(),
    connectionId: connectionIdParam(),
    framework: frameworkParam(),
    sortBy: literals(['name', 'depth', 'consumers', 'throughput', 'failureRate'] as const),
    sortOrder: sortOrderParam(),
    timeRange: literals(TIME_RANGES),
  }),
);

export function queueRoutes({ accounts, connections, engine }: AppDeps) {
  return new Elysia({ name: 'queues' }).get('/api/queues', (context) => {
    const user = dashboardUser(accounts, context);
    const query = validQuery(QueueListParams, { page: '1', limit: '50', sortBy: 'name', sortOrder: 'asc', timeRange: '24h', ...context.query });
    const nowMs = engine.clock.nowMs();
    const views: QueueView[] = [];
    for (const actor of connections.readableActors(user, query.connectionId)) {
      for (const queue of actor.queues.values()) {
        if (query.framework === undefined || queue.framework === query.framework) views.push(toQueueView(queue, actor, query.timeRange, nowMs));
      }
    }
    return pageOf(views, QUEUE_SORT[query.sortBy]!, query);
  });
}
