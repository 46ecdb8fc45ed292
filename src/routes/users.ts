import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { ROLES } from '../../actors/accounts/roles.ts';
import type { IssuedLink } from '../../actors/services/user-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import type { PeerSource } from '../http/client-address.ts';
import { passwordLinkAddress } from '../http/public-address.ts';
import { noteAuditTarget } from '../http/audit-trail.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';
import { literals } from './list-params.ts';

export const CreateUserBody = model(
  Type.Object({
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'absent: the user is invited, and the answer holds the link that sets their password' })),
    teamId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a team to add them to at once' })),
    role: Type.Optional(literals(ROLES, { description: 'their role in `teamId` (default viewer)' })),
  }),
);

/**
 * Users, for the instance admin: list, create or invite, disable and enable, remove, and a
 * password reset link. A link is answered as the address of the page that uses it.
 */
export function userRoutes(deps: AppDeps) {
  const { users, config } = deps;
  const body = bodyReader(deps);
  const linkOf = (link: IssuedLink, request: Request, server: PeerSource | null) => ({
    url: passwordLinkAddress(link.token, request, server, config),
    purpose: link.purpose,
    expiresAt: link.expiresAt,
  });
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration, and this plugin is registered once
  return new Elysia({ name: 'users' })
    .get('/api/users', ({ request }) => ({ data: users.list(accessOf({ request })) }))
    .post(
      '/api/users',
      async ({ request, server, set }) => {
        const input = validBody(CreateUserBody, await body.json(request, FORM_BODY_BYTES_MAX));
        noteAuditTarget(request, input.email.trim().toLowerCase());
        const { user, link } = await users.create(accessOf({ request }), input);
        set.status = 201;
        return { user, invite: link === null ? null : linkOf(link, request, server) };
      },
      // Stryker disable next-line ObjectLiteral,StringLiteral: Elysia parses a body only for handlers that use `body`, which this one does not; 'none' says so
      { parse: 'none' },
    )
    .post('/api/users/:id/disable', async ({ request, params }) => ({ user: await users.setDisabled(accessOf({ request }), params.id, true) }), { parse: 'none' })
    .post('/api/users/:id/enable', async ({ request, params }) => ({ user: await users.setDisabled(accessOf({ request }), params.id, false) }), { parse: 'none' })
    .delete('/api/users/:id', async ({ request, params, set }) => {
      await users.remove(accessOf({ request }), params.id);
      set.status = 204;
    })
    .post('/api/users/:id/password-reset', async ({ request, params, server }) => linkOf(await users.resetLink(accessOf({ request }), params.id), request, server), { parse: 'none' });
}
