import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { dashboardUser } from '../http/dashboard-auth.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';
import { publicUser } from '../../actors/services/account-service.ts';

export const CreateUserBody = model(
  Type.Object({
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  }),
);

/** POST /api/users: the admin creates further users. */
export function userRoutes(deps: AppDeps) {
  const { accounts } = deps;
  const body = bodyReader(deps);
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration, and this plugin is registered once
  return new Elysia({ name: 'users' }).post(
    '/api/users',
    async ({ cookie, request, set }) => {
      const admin = dashboardUser(accounts, { request, cookie });
      const { email, password } = validBody(CreateUserBody, await body.json(request, FORM_BODY_BYTES_MAX));
      const user = await accounts.createUser(admin, email, password);
      set.status = 201;
      return { user: publicUser(user) };
    },
    // Stryker disable next-line ObjectLiteral,StringLiteral: Elysia parses a body only for handlers that use `body`, which this one does not; 'none' says so
    { parse: 'none' },
  );
}
