import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { JobAction } from '../../actors/connection/connection-records.ts';
import type { JobCommandType } from '../../actors/connection/command-types.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { noteAuditTarget } from '../http/audit-trail.ts';
import { BULK_BODY_BYTES_MAX, bodyReader } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';

export const BULK_IDS_MAX = 100;

export const BulkBody = model(
  Type.Object({ ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: BULK_IDS_MAX }) }),
);

/**
 * Revoke and retry, for one job or up to 100, answered as the contract says; run now,
 * delete and kill for one job, answered 202 with the command. Every command is logged,
 * broadcast and queued for the agent.
 */
export function jobActionRoutes(deps: AppDeps) {
  const { jobActions } = deps;
  const body = bodyReader(deps);
  const bulk = (action: JobAction) => async (context: { request: Request }) => {
    const { ids } = validBody(BulkBody, await body.json(context.request, BULK_BODY_BYTES_MAX));
    noteAuditTarget(context.request, ids.length === 1 ? ids[0]! : `${ids.length} jobs`);
    return { results: await jobActions.bulk(accessOf(context), action, ids) };
  };
  const single = (action: JobAction) => async (context: { request: Request; params: { id: string } }) => jobActions.single(accessOf(context), action, context.params.id);
  const command = (type: Exclude<JobCommandType, JobAction>) => async (context: { request: Request; params: { id: string }; set: { status?: number | string } }) => {
    const accepted = await jobActions.command(accessOf(context), type, context.params.id);
    context.set.status = 202;
    return accepted;
  };
  return new Elysia({ name: 'job-actions' })
    .post('/api/jobs/bulk/revoke', bulk('revoke'), { parse: 'none' })
    .post('/api/jobs/bulk/retry', bulk('retry'), { parse: 'none' })
    // no body, but a handler taking the whole context would make Elysia parse one
    .post('/api/jobs/:id/revoke', single('revoke'), { parse: 'none' })
    .post('/api/jobs/:id/retry', single('retry'), { parse: 'none' })
    .post('/api/jobs/:id/promote', command('promote'), { parse: 'none' })
    .post('/api/jobs/:id/delete', command('delete'), { parse: 'none' })
    .post('/api/jobs/:id/kill', command('kill'), { parse: 'none' });
}
