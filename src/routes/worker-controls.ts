/**
 * A worker's controls (quiet, stop, resize its pool), carried out by the connection's
 * agent: each answers 202 with the command, whose outcome the worker, the live stream and
 * `GET /api/commands/{id}` show once the agent reports.
 */
import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { COMMAND_PARAM_LIMITS, type PoolParams, type WorkerCommandType } from '../../actors/connection/command-types.ts';
import { ControlService } from '../../actors/services/control-service.ts';
import { validationError } from '../../actors/domain-error.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody } from '../http/validate.ts';

const { poolDeltaMax } = COMMAND_PARAM_LIMITS;

export const PoolBody = model(
  Type.Object(
    { delta: Type.Integer({ minimum: -poolDeltaMax, maximum: poolDeltaMax, description: 'processes to add (positive) or take away (negative); not 0' }) },
    { additionalProperties: false },
  ),
);

export function workerControlRoutes(deps: AppDeps) {
  const controls = new ControlService(deps.engine, deps.connections);
  const body = bodyReader(deps);
  const ask =
    (type: WorkerCommandType, readParams: (request: Request) => Promise<PoolParams | undefined> = async () => undefined) =>
    async (context: { request: Request; params: { id: string }; set: { status?: number | string } }) => {
      const access = accessOf(context);
      const params = await readParams(context.request);
      const accepted = await controls.workerCommand(access, context.params.id, type, params);
      context.set.status = 202;
      return accepted;
    };
  const poolParams = async (request: Request) => {
    const { delta } = validBody(PoolBody, await body.json(request, FORM_BODY_BYTES_MAX));
    if (delta === 0) throw validationError('delta', 'must not be 0: say how many processes to add (positive) or take away (negative)');
    return { delta };
  };
  return new Elysia({ name: 'worker-controls' })
    .post('/api/workers/:id/quiet', ask('worker.quiet'), { parse: 'none' })
    .post('/api/workers/:id/stop', ask('worker.stop'), { parse: 'none' })
    .post('/api/workers/:id/pool', ask('worker.pool', poolParams), { parse: 'none' });
}
