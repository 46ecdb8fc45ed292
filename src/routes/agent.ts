import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { ackCommands, pendingCommands } from '../../actors/services/agent-service.ts';
import { connectionActorForKey } from '../../actors/services/ingest-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { model, validBody, validQuery } from '../http/validate.ts';

const CommandsParams = model(Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }));
const AckBody = model(Type.Object({ ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 }) }));

/** An agent inside the job system polls the commands of its connection and acknowledges what it carried out. */
export function agentRoutes({ engine }: AppDeps) {
  return new Elysia({ name: 'agent' })
    .get('/api/agent/commands', ({ request, query }) => {
      const actor = connectionActorForKey(engine, bearerToken(request));
      const { limit } = validQuery(CommandsParams, { limit: '100', ...query });
      return { data: pendingCommands(actor, limit) };
    })
    .post('/api/agent/commands/ack', async ({ request, body }) => {
      const actor = connectionActorForKey(engine, bearerToken(request));
      return ackCommands(engine, actor, validBody(AckBody, body).ids);
    });
}
