import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';

export const CreateConnectionBody = model(
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
    teamId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "the team to own it; default: the creator's first team where they are an admin" })),
  }),
);

/** Connections of the signed-in user's teams; the API key is returned only by create. */
export function connectionRoutes(deps: AppDeps) {
  const { connections } = deps;
  const body = bodyReader(deps);
  return new Elysia({ name: 'connections' })
    .post(
      '/api/connections',
      async ({ request, set }) => {
        const { name, teamId } = validBody(CreateConnectionBody, await body.json(request, FORM_BODY_BYTES_MAX));
        const created = await connections.create(accessOf({ request }), name.trim(), teamId);
        set.status = 201;
        return created;
      },
      { parse: 'none' },
    )
    .get('/api/connections', ({ request }) => ({ data: connections.list(accessOf({ request })) }))
    .delete('/api/connections/:id', async ({ params, request, set }) => {
      await connections.delete(accessOf({ request }), params.id);
      set.status = 204;
    });
}
