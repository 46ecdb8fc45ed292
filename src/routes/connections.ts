import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { dashboardUser } from '../http/dashboard-auth.ts';
import { model, validBody } from '../http/validate.ts';

const CreateConnectionBody = model(
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }) }),
);

/** Connections of the logged-in user; the API key is returned only by create. */
export function connectionRoutes({ accounts, connections }: AppDeps) {
  return new Elysia({ name: 'connections' })
    .post('/api/connections', async ({ body, cookie, request, set }) => {
      const user = dashboardUser(accounts, { request, cookie });
      const { name } = validBody(CreateConnectionBody, body);
      set.status = 201;
      return connections.create(user, name.trim());
    })
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
