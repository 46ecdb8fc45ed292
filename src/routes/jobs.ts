import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { JOB_STATES } from '../../actors/ingest/states.ts';
import { listJobs } from '../../actors/queries/job-list.ts';
import { PAYLOAD_TEXT_CHARS_MAX, payloadQueryOf } from '../../actors/queries/payload-search.ts';
import { toJobDetail } from '../../actors/views/job-view.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { model, validQuery } from '../http/validate.ts';
import { mergeDetailAsked } from '../shards/merge-detail.ts';
import { connectionIdParam, frameworkParam, limitParam, literals, sortOrderParam } from './list-params.ts';

export const JobListParams = model(
  Type.Object({
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    limit: limitParam(),
    search: Type.Optional(Type.String({ maxLength: 500 })),
    args: Type.Optional(Type.String({ minLength: 1, maxLength: PAYLOAD_TEXT_CHARS_MAX, description: "a piece of the arguments' JSON text (case-sensitive); see also `data.<path>`" })),
    state: Type.Optional(literals(JOB_STATES)),
    queue: Type.Optional(Type.String({ maxLength: 255 })),
    worker: Type.Optional(Type.String({ maxLength: 512 })),
    connectionId: connectionIdParam(),
    framework: frameworkParam(),
    sortBy: literals(JOB_SORT_KEYS, { default: 'createdAt' }),
    sortOrder: sortOrderParam('desc'),
  }),
);

const RECENT_EXECUTIONS_MAX = 10;

/** Job lists and job detail, over every connection of the session user's teams. */
export function jobReadRoutes(deps: AppDeps) {
  const { connections } = deps;
  return new Elysia({ name: 'job-reads' })
    .get('/api/jobs', (context) => {
      const query = validQuery(JobListParams, context.query);
      return listJobs(connections.readableActors(accessOf(context), query.connectionId), query, payloadQueryOf(context.query), { itemCursors: mergeDetailAsked(deps, context.request) });
    })
    .get('/api/jobs/:id', (context) => {
      for (const actor of connections.readableActors(accessOf(context), undefined)) {
        const job = actor.jobs.get(context.params.id);
        if (job !== undefined) return toJobDetail(job, actor.jobs.recentOfName(job, RECENT_EXECUTIONS_MAX), actor.commandOutcomes.trailOf(job.id), actor.supportOf);
      }
      throw new DomainError('NOT_FOUND', 'job not found');
    });
}
