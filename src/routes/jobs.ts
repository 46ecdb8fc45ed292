import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { JOB_STATES } from '../../actors/ingest/states.ts';
import { listJobs } from '../../actors/queries/job-list.ts';
import { workflowOf } from '../../actors/queries/workflow.ts';
import { PAYLOAD_TEXT_CHARS_MAX, payloadQueryOf } from '../../actors/queries/payload-search.ts';
import { toJobDetail } from '../../actors/views/job-view.ts';
import { relationsOf } from '../../actors/connection/job-links.ts';
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
    parentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only the jobs whose parent is this job (its children)" })),
    rootId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the jobs of the workflow this job starts, itself included (at most 10,000, as the workflow route)' })),
    sortBy: literals(JOB_SORT_KEYS, { default: 'createdAt' }),
    sortOrder: sortOrderParam('desc'),
  }),
);

const RECENT_EXECUTIONS_MAX = 10;

/** Job lists and job detail, over every connection of the session user's teams. */
export function jobReadRoutes(deps: AppDeps) {
  const { connections, engine } = deps;
  return new Elysia({ name: 'job-reads' })
    .get('/api/jobs', (context) => {
      const query = validQuery(JobListParams, context.query);
      return listJobs(connections.readableActors(accessOf(context), query.connectionId), query, payloadQueryOf(context.query), { itemCursors: mergeDetailAsked(deps, context.request) });
    })
    .get('/api/jobs/:id', (context) => {
      for (const actor of connections.readableActors(accessOf(context), undefined)) {
        const row = actor.jobs.rowOf(context.params.id);
        if (row < 0) continue;
        const job = actor.jobs.read(row);
        return toJobDetail(job, actor.jobs.recentOfName(job, RECENT_EXECUTIONS_MAX), actor.commandOutcomes.trailOf(job.id), actor.supportOf, relationsOf(actor.jobs, row));
      }
      throw new DomainError('NOT_FOUND', 'job not found');
    })
    .get('/api/jobs/:id/workflow', (context) => {
      for (const actor of connections.readableActors(accessOf(context), undefined)) {
        const row = actor.jobs.rowOf(context.params.id);
        if (row >= 0) return workflowOf(actor.jobs, row, engine.clock.nowMs());
      }
      throw new DomainError('NOT_FOUND', 'job not found');
    });
}
