/**
 * POST /api/ingest. The body is read by hand (Elysia's parser is off for this route) so
 * that size is checked before parsing and the envelope is checked apart from the
 * events: envelope problems fail the request, a bad event fails only itself.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';

export const INGEST_BODY_BYTES_MAX = 5 * 1024 * 1024;
export const INGEST_EVENTS_MAX = 1000;

export function ingestRoutes({ engine }: AppDeps) {
  return new Elysia({ name: 'ingest' }).post(
    '/api/ingest',
    async ({ request }) => {
      const declaredBytes = Number(request.headers.get('content-length') ?? '0');
      if (declaredBytes > INGEST_BODY_BYTES_MAX) throw tooLarge();
      const apiKey = bearerToken(request);
      if (apiKey === null) throw new DomainError('UNAUTHORIZED', 'invalid or missing API key');
      const contentType = request.headers.get('content-type') ?? '';
      if (!/^application\/json\s*(;|$)/i.test(contentType)) {
        throw new DomainError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got '${contentType || 'none'}'`);
      }
      const bytes = await request.arrayBuffer();
      if (bytes.byteLength > INGEST_BODY_BYTES_MAX) throw tooLarge(); // chunked bodies carry no length up front
      return ingestEvents(engine, apiKey, eventsOf(parseJson(bytes)));
    },
    { parse: 'none' },
  );
}

function tooLarge(): DomainError {
  return new DomainError('PAYLOAD_TOO_LARGE', `request body exceeds ${INGEST_BODY_BYTES_MAX} bytes`);
}

function parseJson(bytes: ArrayBuffer): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new DomainError('VALIDATION_ERROR', 'request body is not valid JSON', { body: ['must be valid JSON'] });
  }
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
