import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { ROLES } from '../../actors/accounts/roles.ts';
import { TEAM_NAME_CHARS_MAX } from '../../actors/accounts/team-book.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { noteAuditTarget } from '../http/audit-trail.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';
import { literals } from './list-params.ts';

const teamName = () => Type.String({ minLength: 1, maxLength: TEAM_NAME_CHARS_MAX, pattern: '\\S' });
const role = () => literals(ROLES);

export const CreateTeamBody = model(Type.Object({ name: teamName() }, { additionalProperties: false }));
export const RenameTeamBody = CreateTeamBody;
export const AddMemberBody = model(Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }), role: role() }, { additionalProperties: false }));
export const SetRoleBody = model(Type.Object({ role: role() }, { additionalProperties: false }));

/** Teams and their members (who may call each: src/http/access-rules.ts). */
export function teamRoutes(deps: AppDeps) {
  const { teams } = deps;
  const body = bodyReader(deps);
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration
  return new Elysia({ name: 'teams' })
    .get('/api/teams', (context) => ({ data: teams.list(accessOf(context)) }))
    .post(
      '/api/teams',
      async (context) => {
        const { name } = validBody(CreateTeamBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        context.set.status = 201;
        return { team: await teams.create(accessOf(context), name) };
      },
      { parse: 'none' },
    )
    .get('/api/teams/:id', (context) => ({ team: teams.get(accessOf(context), context.params.id) }))
    .patch(
      '/api/teams/:id',
      async (context) => {
        const { name } = validBody(RenameTeamBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        return { team: await teams.rename(accessOf(context), context.params.id, name) };
      },
      { parse: 'none' },
    )
    .delete('/api/teams/:id', async (context) => {
      await teams.delete(accessOf(context), context.params.id);
      context.set.status = 204;
    })
    .get('/api/teams/:id/members', (context) => ({ data: teams.members(accessOf(context), context.params.id) }))
    .post(
      '/api/teams/:id/members',
      async (context) => {
        const { email, role } = validBody(AddMemberBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        noteAuditTarget(context.request, email.trim().toLowerCase());
        context.set.status = 201;
        return { member: await teams.addMember(accessOf(context), context.params.id, email, role) };
      },
      { parse: 'none' },
    )
    .patch(
      '/api/teams/:id/members/:userId',
      async (context) => {
        const { role } = validBody(SetRoleBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        return { member: await teams.setRole(accessOf(context), context.params.id, context.params.userId, role) };
      },
      { parse: 'none' },
    )
    .delete('/api/teams/:id/members/:userId', async (context) => {
      await teams.removeMember(accessOf(context), context.params.id, context.params.userId);
      context.set.status = 204;
    });
}
