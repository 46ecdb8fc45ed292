/** What the OpenAPI document says about the team routes (docs/security.md is the guide: roles, the matrix). */
import { AddMemberBody, CreateTeamBody, RenameTeamBody, SetRoleBody } from '../routes/teams.ts';
import * as Reply from './team-models.ts';
import type { OperationDoc } from './operations.ts';

export const TEAM_OPERATIONS: Record<string, OperationDoc> = {
  'GET /api/teams': {
    tag: 'Teams',
    summary: "The signed-in user's teams, with their role in each",
    description: 'The instance admin sees every team, as an admin of each.',
    auth: 'session',
    success: { 200: { description: 'In the order the user joined them', json: Reply.TeamList } },
    errors: [],
  },
  'POST /api/teams': {
    tag: 'Teams',
    summary: 'Create a team (the instance admin)',
    description: 'Names are unique whatever their case, 1 to 100 characters; at most 1,000 teams (409 `CONFLICT`). The team starts with no members: add them with POST /api/teams/{id}/members.',
    auth: 'session',
    body: CreateTeamBody.schema,
    success: { 201: { description: 'Created', json: Reply.TeamReply } },
    errors: ['VALIDATION_ERROR', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/teams/:id': {
    tag: 'Teams',
    summary: 'One team (its members may read it)',
    auth: 'session',
    success: { 200: { description: 'The team', json: Reply.TeamReply } },
    errors: ['NOT_FOUND'],
  },
  'PATCH /api/teams/:id': {
    tag: 'Teams',
    summary: 'Rename a team (its admins)',
    auth: 'session',
    body: RenameTeamBody.schema,
    success: { 200: { description: 'Renamed', json: Reply.TeamReply } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/teams/:id': {
    tag: 'Teams',
    summary: 'Delete a team and its memberships (the instance admin)',
    description: 'A team that still owns connections is not deleted (409 `CONFLICT`): delete them first, so no data is left without a team.',
    auth: 'session',
    success: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/teams/:id/members': {
    tag: 'Teams',
    summary: "A team's members and their roles (its members may read them)",
    auth: 'session',
    success: { 200: { description: 'The members', json: Reply.MemberList } },
    errors: ['NOT_FOUND'],
  },
  'POST /api/teams/:id/members': {
    tag: 'Teams',
    summary: 'Add a member, or change the role of one (the team\'s admins)',
    description:
      'The user must exist (the instance admin creates and invites users: POST /api/users); an unknown email is 404. ' +
      'At most 1,000 members per team and 100 teams per user (409 `CONFLICT`). A team keeps at least one admin.',
    auth: 'session',
    body: AddMemberBody.schema,
    success: { 201: { description: 'The membership', json: Reply.MemberReply } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'PATCH /api/teams/:id/members/:userId': {
    tag: 'Teams',
    summary: "Change a member's role (the team's admins)",
    description: 'The last admin of a team cannot be made viewer or operator (409 `CONFLICT`): make another member admin first.',
    auth: 'session',
    body: SetRoleBody.schema,
    success: { 200: { description: 'The membership', json: Reply.MemberReply } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/teams/:id/members/:userId': {
    tag: 'Teams',
    summary: 'Remove a member (the team\'s admins)',
    description: 'Their live streams of the team\'s connections end at once. The last admin cannot be removed (409 `CONFLICT`).',
    auth: 'session',
    success: { 204: { description: 'Removed' } },
    errors: ['NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
};
