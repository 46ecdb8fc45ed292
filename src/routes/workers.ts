import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { WORKER_STATES } from '../../actors/ingest/states.ts';
import type { SortValue } from '../../actors/jobs/sorted-index.ts';
import { pageOf } from '../../actors/queries/paged-list.ts';
import { toWorkerView, type WorkerView } from '../../actors/views/worker-view.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { model, validQuery } from '../http/validate.ts';
import { mergeDetailAsked } from '../shards/merge-detail.ts';
import { connectionIdParam, frameworkParam, limitParam, literals, sortOrderParam, pageParam } from './list-params.ts';

const WORKER_SORT: Record<string, (worker: WorkerView) => SortValue> = {
  hostname: (worker) => worker.hostname,
  state: (worker) => worker.state,
  activeJobs: (worker) => worker.activeJobs,
  lastHeartbeat: (worker) => (worker.lastHeartbeat === null ? null : Date.parse(worker.lastHeartbeat)),
  taskRate: (worker) => worker.taskRate,
};

export const WorkerListParams = model(
  Type.Object({
    page: pageParam(),
    limit: limitParam(),
    connectionId: connectionIdParam(),
    framework: frameworkParam(),
    state: Type.Optional(literals(WORKER_STATES)),
    sortBy: literals(['hostname', 'state', 'activeJobs', 'lastHeartbeat', 'taskRate'] as const, { default: 'hostname' }),
    sortOrder: sortOrderParam('asc'),
  }),
);

export function workerRoutes(deps: AppDeps) {
  const { connections, engine } = deps;
  return new Elysia({ name: 'workers' }).get('/api/workers', (context) => {
    const query = validQuery(WorkerListParams, context.query);
    const nowMs = engine.clock.nowMs();
    const views: WorkerView[] = [];
    for (const actor of connections.readableActors(accessOf(context), query.connectionId)) {
      for (const worker of actor.workers.values()) {
        if (query.framework !== undefined && worker.framework !== query.framework) continue;
        const view = toWorkerView(worker, actor, nowMs);
        if (query.state === undefined || view.state === query.state) views.push(view);
      }
    }
    return pageOf(views, WORKER_SORT[query.sortBy]!, { ...query, throughPage: mergeDetailAsked(deps, context.request) });
  });
}
