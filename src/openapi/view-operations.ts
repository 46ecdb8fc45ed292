/** What the OpenAPI document says about saved views of the jobs list (docs/dashboard.md is the guide). */
import { Type, type Static } from '@sinclair/typebox';
import type { PublicSavedView } from '../../actors/services/saved-view-service.ts';
import { CreateViewBody, UpdateViewBody, ViewListParams } from '../routes/saved-views.ts';
import type { OperationDoc } from './operations.ts';
import { closed, same, time } from './response-models.ts';

const SavedView = closed({
  id: Type.String(),
  teamId: Type.String({ description: 'the team that owns it: its members read it, its operators and admins change it' }),
  name: Type.String(),
  params: Type.Record(Type.String(), Type.String(), { description: 'the jobs list\'s query parameters it opens with (GET /api/jobs)' }),
  createdBy: Type.Union([Type.String(), Type.Null()], { description: 'the email of who saved it; null once that user is removed' }),
  createdAt: time(),
  updatedAt: time(),
});
const ViewReply = closed({ view: SavedView });
const ViewList = closed({ data: Type.Array(SavedView, { description: "by team, then by name" }) });

same<PublicSavedView, Static<typeof SavedView>>(true);

export const VIEW_OPERATIONS: Record<string, OperationDoc> = {
  'GET /api/views': {
    tag: 'Jobs',
    summary: "Saved views of the jobs list, of the user's teams",
    description: '`teamId` narrows it to one team (a team the user is not in gives an empty list).',
    auth: 'session',
    query: ViewListParams.schema,
    success: { 200: { description: 'The views', json: ViewList } },
    errors: ['VALIDATION_ERROR'],
  },
  'POST /api/views': {
    tag: 'Jobs',
    summary: 'Save a view: a name for filters and a sort, shared with the team (its operators and admins)',
    description:
      '`params` are checked as GET /api/jobs checks them (400 naming the one it would refuse); `connectionId` must be one of the team\'s connections. ' +
      'Names are unique within a team whatever their case, 1 to 100 characters; at most 200 views per team and 16 parameters per view (409 `CONFLICT`, 400).',
    auth: 'session',
    body: CreateViewBody.schema,
    success: { 201: { description: 'Saved', json: ViewReply } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'PATCH /api/views/:id': {
    tag: 'Jobs',
    summary: "Rename a view or change its filters (the team's operators and admins)",
    auth: 'session',
    body: UpdateViewBody.schema,
    success: { 200: { description: 'Changed', json: ViewReply } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/views/:id': {
    tag: 'Jobs',
    summary: "Delete a view (the team's operators and admins)",
    auth: 'session',
    success: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
};
