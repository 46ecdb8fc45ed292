import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { dashboardUser } from '../http/dashboard-auth.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';

export const CreateConnectionBody = model(
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }) }),
);

/** Connections of the logged-in user; the API key is returned only by create. */
export function connectionRoutes(deps: AppDeps) {
  const { accounts, connections } = deps;
  const body = bodyReader(deps);
  return new Elysia({ name: 'connections' })
    .post(
      '/api/connections',
      async ({ cookie, request, set }) => {
        const user = dashboardUser(accounts, { request, cookie });
        const { name } = validBody(CreateConnectionBody, await body.json(request, FORM_BODY_BYTES_MAX));
        set.status = 201;
        return connections.create(user, name.trim());
      },
      { parse: 'none' },
    )
    .get('/api/connections', ({ cookie, request }) => {
      const user = dashboardUser(accounts, { request, cookie });
      return { data: connections.list(user) };
    })
    .delete('/api/connections/:id', async ({ params, cookie, request, set }) => {
      const user = dashboardUser(accounts, { request, cookie });
      await connections.delete(user, params.id);
      set.status = 204;
    });
}
