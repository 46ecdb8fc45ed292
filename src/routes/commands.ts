/**
 * What the dashboard reads of the commands sent to agents (one command by id, with its
 * outcome) and of the agents (what each said it supports), and the one control that names
 * its target in the body: a task's rate limit.
 */
import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { COMMAND_PARAM_LIMITS, RATE_PATTERN } from '../../actors/connection/command-types.ts';
import { ControlService } from '../../actors/services/control-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { noteAuditTarget } from '../http/audit-trail.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';
import { connectionIdParam } from './list-params.ts';

export const RateLimitBody = model(
  Type.Object(
    {
      connectionId: Type.String({ minLength: 1, maxLength: 64 }),
      name: Type.String({ minLength: 1, maxLength: 1024, description: "the task's name, as its jobs carry it" }),
      queue: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
      rate: Type.Union([Type.String({ maxLength: COMMAND_PARAM_LIMITS.rateChars, pattern: RATE_PATTERN }), Type.Null()], {
        description: "Celery's syntax: tasks per second (`10`, `10/s`), minute (`10/m`) or hour (`10/h`); null clears the limit",
      }),
    },
    { additionalProperties: false },
  ),
);

export const CapabilitiesParams = model(Type.Object({ connectionId: connectionIdParam() }));

export function commandRoutes(deps: AppDeps) {
  const controls = new ControlService(deps.engine, deps.connections);
  const body = bodyReader(deps);
  return new Elysia({ name: 'commands' })
    .get('/api/commands/:id', (context) => controls.command(accessOf(context), context.params.id))
    .get('/api/capabilities', (context) => {
      const access = accessOf(context);
      const { connectionId } = validQuery(CapabilitiesParams, context.query);
      return { data: controls.capabilities(access, connectionId) };
    })
    .post(
      '/api/tasks/rate-limit',
      async (context) => {
        const access = accessOf(context);
        const input = validBody(RateLimitBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        noteAuditTarget(context.request, `task ${input.name}`);
        const accepted = await controls.rateLimit(access, input.connectionId, input.name, input.queue ?? null, { rate: input.rate });
        context.set.status = 202;
        return accepted;
      },
      { parse: 'none' },
    );
}
