import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import type { Queue } from '../../actors/connection/queue-store.ts';
import { TIME_RANGES, type TimeRange } from '../../actors/metrics/queue-metrics.ts';
import { pageThenPresent } from '../../actors/queries/paged-list.ts';
import { queueConsumers, queueDepth, toQueueView } from '../../actors/views/queue-view.ts';
import type { SortValue } from '../../actors/jobs/sorted-index.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { model, validQuery } from '../http/validate.ts';
import { mergeDetailAsked } from '../shards/merge-detail.ts';
import { connectionIdParam, frameworkParam, limitParam, literals, sortOrderParam, pageParam } from './list-params.ts';

/** A queue of a readable connection; its full view is built only if it lands on the page. */
interface Listed {
  id: string;
  queue: Queue;
  actor: ConnectionActor;
}

type QueueSortKey = 'name' | 'depth' | 'consumers' | 'throughput' | 'failureRate';

/** Sort keys without building views: O(1) each, or one metrics summary for the rate keys. */
function queueSortValue(sortBy: QueueSortKey, range: TimeRange, nowMs: number): (listed: Listed) => SortValue {
  switch (sortBy) {
    case 'name':
      return ({ queue }) => queue.name;
    case 'depth':
      return ({ queue, actor }) => queueDepth(queue, actor);
    case 'consumers':
      return ({ queue, actor }) => queueConsumers(queue, actor, nowMs);
    case 'throughput':
      return ({ queue }) => queue.metrics.summary(range, nowMs).throughput;
    case 'failureRate':
      return ({ queue }) => queue.metrics.summary(range, nowMs).failureRate;
  }
}

export const QueueListParams = model(
  Type.Object({
    page: pageParam(),
    limit: limitParam(),
    connectionId: connectionIdParam(),
    framework: frameworkParam(),
    paused: Type.Optional(literals(['true', 'false'] as const, { description: 'only the queues their job system says are paused (true) or not paused (false)' })),
    sortBy: literals(['name', 'depth', 'consumers', 'throughput', 'failureRate'] as const, { default: 'name' }),
    sortOrder: sortOrderParam('asc'),
    timeRange: literals(TIME_RANGES, { default: '24h' }),
  }),
);

export const QueueParams = model(Type.Object({ timeRange: literals(TIME_RANGES, { default: '24h' }) }));

export function queueRoutes(deps: AppDeps) {
  const { connections, engine } = deps;
  return new Elysia({ name: 'queues' })
    .get('/api/queues/:id', (context) => {
      const { timeRange } = validQuery(QueueParams, context.query);
      for (const actor of connections.readableActors(accessOf(context), undefined)) {
        const queue = actor.queues.getById(context.params.id);
        if (queue !== undefined) return toQueueView(queue, actor, timeRange, engine.clock.nowMs());
      }
      throw new DomainError('NOT_FOUND', 'queue not found');
    })
    .get('/api/queues', (context) => {
      const query = validQuery(QueueListParams, context.query);
      const nowMs = engine.clock.nowMs();
      const listed: Listed[] = [];
      for (const actor of connections.readableActors(accessOf(context), query.connectionId)) {
        for (const queue of actor.queues.values()) {
          if (query.framework !== undefined && queue.framework !== query.framework) continue;
          if (query.paused !== undefined && (queue.paused === true) !== (query.paused === 'true')) continue;
          listed.push({ id: queue.id, queue, actor });
        }
      }
      const sortValue = queueSortValue(query.sortBy, query.timeRange, nowMs);
      const page = { ...query, throughPage: mergeDetailAsked(deps, context.request) };
      return pageThenPresent(listed, sortValue, page, ({ queue, actor }) => toQueueView(queue, actor, query.timeRange, nowMs));
    });
}
