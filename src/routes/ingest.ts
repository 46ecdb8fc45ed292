/**
 * POST /api/ingest. The body is read by hand (Elysia's parser is off for this route) so
 * that the API key is resolved before a byte of the body is read (an unauthenticated
 * client costs no memory), size is checked before parsing, and the envelope is checked
 * apart from the events: envelope problems fail the request, a bad event fails only itself.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { connectionActorForKey, ingestForConnection } from '../../actors/services/ingest-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { bodyReader } from '../http/read-body.ts';
import { NOT_OBSERVED } from '../metrics/service-observer.ts';

/** The interface's "5 MB": 5 MiB, 5,242,880 bytes, inclusive. */
export const INGEST_BODY_BYTES_MAX = 5 * 1024 * 1024;
export const INGEST_EVENTS_MAX = 1000;

export function ingestRoutes(deps: AppDeps) {
  const { engine } = deps;
  const body = bodyReader(deps);
  const observer = deps.metrics?.service ?? NOT_OBSERVED;
  return new Elysia({ name: 'ingest' }).post(
    '/api/ingest',
    async ({ request }) => {
      const startedAtMs = performance.now();
      let events: unknown[] | undefined;
      try {
        const actor = connectionActorForKey(engine, bearerToken(request)); // a 401 here leaves the body unread
        events = eventsOf(await body.json(request, INGEST_BODY_BYTES_MAX));
        // ingestForConnection checks the connection still exists: it may have been deleted while the body arrived
        const reply = await ingestForConnection(engine, actor, events, deps.ingestTimings);
        observer.ingestAnswered(startedAtMs, reply);
        return reply;
      } catch (error) {
        observer.ingestRefused(startedAtMs, error, events?.length ?? 0);
        throw error;
      }
    },
    { parse: 'none' },
  );
}

function eventsOf(body: unknown): unknown[] {
  const events = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { events?: unknown }).events : undefined;
  const problem = !Array.isArray(events)
    ? 'is required and must be an array'
    : events.length === 0
      ? 'must contain at least 1 event'
      : events.length > INGEST_EVENTS_MAX
        ? `must contain at most ${INGEST_EVENTS_MAX} events, got ${events.length}`
        : null;
  if (problem !== null) throw new DomainError('VALIDATION_ERROR', 'request body failed schema validation', { events: [problem] });
  return events as unknown[];
}
