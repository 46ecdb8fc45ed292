/**
 * Saved views of the jobs list (who may call each: src/http/access-rules.ts). A view's
 * `params` are the jobs list's query parameters, checked as `GET /api/jobs` checks them, so
 * a saved view always opens; a page's cursor and size are not part of a view.
 */
import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { VIEW_NAME_CHARS_MAX, VIEW_PARAM_VALUE_CHARS_MAX, VIEW_PARAMS_MAX } from '../../actors/accounts/saved-views.ts';
import { validationError } from '../../actors/domain-error.ts';
import { payloadQueryOf } from '../../actors/queries/payload-search.ts';
import { SavedViewService } from '../../actors/services/saved-view-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { noteAuditTarget } from '../http/audit-trail.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';
import { JobListParams } from './jobs.ts';

const viewName = () => Type.String({ minLength: 1, maxLength: VIEW_NAME_CHARS_MAX, pattern: '\\S' });
const viewParams = () =>
  Type.Record(Type.String(), Type.String({ maxLength: VIEW_PARAM_VALUE_CHARS_MAX }), {
    maxProperties: VIEW_PARAMS_MAX,
    description: 'the jobs list\'s filters and sort, as `GET /api/jobs` takes them (`state`, `queue`, `search`, `data.userId`, `sortBy`, ...); not `cursor` nor `limit`',
  });

export const CreateViewBody = model(Type.Object({ teamId: Type.String({ minLength: 1, maxLength: 64 }), name: viewName(), params: viewParams() }, { additionalProperties: false }));
export const UpdateViewBody = model(Type.Object({ name: Type.Optional(viewName()), params: Type.Optional(viewParams()) }, { additionalProperties: false }));
export const ViewListParams = model(Type.Object({ teamId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }));

/** The filters and sort of the jobs list a view may keep: its own query parameters, less the page's. */
const LIST_KEYS = new Set(Object.keys(JobListParams.schema.properties).filter((key) => key !== 'cursor' && key !== 'limit'));

/** `params` as the jobs list would take them, or a 400 naming the parameter that it would refuse. */
export function checkedViewParams(params: Record<string, string>): Record<string, string> {
  for (const key of Object.keys(params)) {
    if (!LIST_KEYS.has(key) && !key.startsWith('data.') && !key.startsWith('kwargs.')) {
      throw validationError(`params.${key}`, `is not a filter or sort of the jobs list (${[...LIST_KEYS].join(', ')}, data.<path>, kwargs.<path>)`);
    }
  }
  validQuery(JobListParams, params);
  payloadQueryOf(params);
  return params;
}

export function savedViewRoutes(deps: AppDeps) {
  const views = new SavedViewService(deps.engine);
  const body = bodyReader(deps);
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration
  return new Elysia({ name: 'saved-views' })
    .get('/api/views', (context) => ({ data: views.list(accessOf(context), validQuery(ViewListParams, context.query).teamId) }))
    .post(
      '/api/views',
      async (context) => {
        const input = validBody(CreateViewBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        noteAuditTarget(context.request, input.name.trim());
        context.set.status = 201;
        return { view: await views.create(accessOf(context), { ...input, params: checkedViewParams(input.params) }) };
      },
      { parse: 'none' },
    )
    .patch(
      '/api/views/:id',
      async (context) => {
        const change = validBody(UpdateViewBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        const params = change.params === undefined ? undefined : checkedViewParams(change.params);
        return { view: await views.update(accessOf(context), context.params.id, { name: change.name, params }) };
      },
      { parse: 'none' },
    )
    .delete('/api/views/:id', async (context) => {
      await views.delete(accessOf(context), context.params.id);
      context.set.status = 204;
    });
}
