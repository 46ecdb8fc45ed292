import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { ackCommands, pendingCommands } from '../../actors/services/agent-service.ts';
import { connectionActorForKey } from '../../actors/services/ingest-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { bodyReader } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';

const CommandsParams = model(Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }));
/** 1,000 ids of up to 64 characters; command ids are 26-character ULIDs */
const ACK_BODY_BYTES_MAX = 128 * 1024;
const AckBody = model(Type.Object({ ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 }) }));

/** An agent inside the job system polls the commands of its connection and acknowledges what it carried out. */
export function agentRoutes(deps: AppDeps) {
  const { engine } = deps;
  const body = bodyReader(deps);
  return new Elysia({ name: 'agent' })
    .get('/api/agent/commands', ({ request, query }) => {
      const actor = connectionActorForKey(engine, bearerToken(request));
      const { limit } = validQuery(CommandsParams, { limit: '100', ...query });
      return { data: pendingCommands(actor, limit) };
    })
    .post(
      '/api/agent/commands/ack',
      async ({ request }) => {
        const actor = connectionActorForKey(engine, bearerToken(request)); // before the body is read
        return ackCommands(engine, actor, validBody(AckBody, await body.json(request, ACK_BODY_BYTES_MAX)).ids);
      },
      { parse: 'none' },
    );
}
