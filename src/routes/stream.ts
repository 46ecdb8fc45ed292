import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { accessOf, sessionKeyOf } from '../http/access-guard.ts';
import { model, validQuery } from '../http/validate.ts';
import { connectionIdParam } from './list-params.ts';

export const StreamParams = model(
  Type.Object({
    connectionId: connectionIdParam(),
    /** for a first connect, where EventSource cannot set the Last-Event-ID header */
    lastEventId: Type.Optional(Type.String({ maxLength: 64 })),
  }),
);

/**
 * GET /api/events/stream: Server-Sent Events of the connections of the user's teams (or one of them),
 * for as long as the session that opened it lives (see LiveUpdates).
 */
export function streamRoutes({ connections, live }: AppDeps) {
  return new Elysia({ name: 'stream' }).get('/api/events/stream', async (context) => {
    const access = accessOf(context);
    const sessionKey = sessionKeyOf(context);
    const { request, server } = context;
    const query = validQuery(StreamParams, context.query);
    const lastEventId = request.headers.get('last-event-id') ?? query.lastEventId;
    const connectionIds = connections.readableConnectionIds(access, query.connectionId);
    // on a shard's front the shards keeping these connections start sending their events first
    await live.prepare(connectionIds);
    const subscription = live.subscribe({ userId: access.user.id, sessionKey }, connectionIds, lastEventId, request.signal);
    // Bun 1.4.5 was measured not to idle-time-out a response that is still streaming; this
    // keeps a quiet stream safe should that change (keep-alives serve proxies).
    server?.timeout(request, 0);
    return new Response(subscription.stream, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      },
    });
  });
}
