/**
 * A queue's controls (pause, resume, clean, retry all failed, concurrency), carried out by
 * the connection's agent: each answers 202 with the command, whose outcome the queue, the
 * live stream and `GET /api/commands/{id}` show once the agent reports. And what a clean
 * would remove, for the dashboard's confirm step.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { CLEANABLE_STATES, COMMAND_PARAM_LIMITS, type CleanParams, type QueueCommandType } from '../../actors/connection/command-types.ts';
import { ControlService, type QueueParams } from '../../actors/services/control-service.ts';
import { validationError } from '../../actors/domain-error.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';
import { literals } from './list-params.ts';

const olderThanMs = () =>
  Type.Integer({ minimum: 0, maximum: COMMAND_PARAM_LIMITS.cleanOlderThanMsMax, description: 'finished more than this many milliseconds ago' });

/** `finished`: jobs in `states` that finished more than `olderThanMs` ago; `waiting`: every job waiting in the queue. */
export const CleanBody = model(
  Type.Object(
    {
      mode: literals(['finished', 'waiting'] as const),
      olderThanMs: Type.Optional(olderThanMs()),
      states: Type.Optional(Type.Array(literals(CLEANABLE_STATES), { minItems: 1, maxItems: CLEANABLE_STATES.length })),
    },
    { additionalProperties: false },
  ),
);

export const ConcurrencyBody = model(
  Type.Object(
    { concurrency: Type.Union([Type.Integer({ minimum: 1, maximum: COMMAND_PARAM_LIMITS.concurrencyMax }), Type.Null()], { description: 'jobs of the queue running at once across its workers; null clears the limit' }) },
    { additionalProperties: false },
  ),
);

/** The query of the clean estimate: the clean's body, with `states` comma-separated. */
export const CleanEstimateParams = model(
  Type.Object({
    mode: literals(['finished', 'waiting'] as const),
    olderThanMs: Type.Optional(olderThanMs()),
    states: Type.Optional(Type.String({ maxLength: 64, description: 'comma-separated: completed, failed' })),
  }),
);

/** The model allows each field alone; a clean needs both or neither, as its mode says. */
export function cleanParamsOf(body: Static<typeof CleanBody.schema>): CleanParams {
  if (body.mode === 'waiting') {
    if (body.olderThanMs !== undefined || body.states !== undefined) throw validationError('mode', "a 'waiting' clean removes every waiting job: it takes no olderThanMs or states");
    return { mode: 'waiting' };
  }
  if (body.olderThanMs === undefined) throw validationError('olderThanMs', "a 'finished' clean needs olderThanMs");
  if (body.states === undefined) throw validationError('states', "a 'finished' clean needs states (completed, failed)");
  return { mode: 'finished', olderThanMs: body.olderThanMs, states: body.states };
}

export function queueControlRoutes(deps: AppDeps) {
  const controls = new ControlService(deps.engine, deps.connections);
  const body = bodyReader(deps);
  const ask =
    (type: QueueCommandType, readParams: (request: Request) => Promise<QueueParams> = async () => undefined) =>
    async (context: { request: Request; params: { id: string }; set: { status?: number | string } }) => {
      const access = accessOf(context);
      const params = await readParams(context.request);
      const accepted = await controls.queueCommand(access, context.params.id, type, params);
      context.set.status = 202;
      return accepted;
    };
  const cleanParams = async (request: Request) => cleanParamsOf(validBody(CleanBody, await body.json(request, FORM_BODY_BYTES_MAX)));
  const concurrencyParams = async (request: Request) => validBody(ConcurrencyBody, await body.json(request, FORM_BODY_BYTES_MAX));
  return new Elysia({ name: 'queue-controls' })
    .post('/api/queues/:id/pause', ask('queue.pause'), { parse: 'none' })
    .post('/api/queues/:id/resume', ask('queue.resume'), { parse: 'none' })
    .post('/api/queues/:id/clean', ask('queue.clean', cleanParams), { parse: 'none' })
    .post('/api/queues/:id/retry-failed', ask('queue.retry_failed'), { parse: 'none' })
    .post('/api/queues/:id/concurrency', ask('queue.concurrency', concurrencyParams), { parse: 'none' })
    .get('/api/queues/:id/clean-estimate', (context) => {
      const access = accessOf(context);
      const query = validQuery(CleanEstimateParams, context.query);
      const states = query.states === undefined ? undefined : query.states.split(',').map((state) => state.trim());
      const unknown = states?.find((state) => !(CLEANABLE_STATES as readonly string[]).includes(state));
      if (unknown !== undefined) throw validationError('states', `'${unknown.slice(0, 20)}' is not one of ${CLEANABLE_STATES.join(', ')}`);
      const params = cleanParamsOf({ mode: query.mode, olderThanMs: query.olderThanMs, states: states as CleanParams extends { states: infer S } ? S : never });
      return controls.cleanEstimate(access, context.params.id, params);
    });
}
