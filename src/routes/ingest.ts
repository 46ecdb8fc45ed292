/**
 * POST /api/ingest. The body is read by hand (Elysia's parser is off for this route) so
 * that everything known before the body is decided before a byte of it is read: the API
 * key (an unauthenticated client costs no memory), a used-up daily quota (see
 * `QUOTA_SPENT_BODY_BYTES_MAX`), and what the connection already has in flight (in-flight.ts). Size and structure are checked while
 * the body arrives, the events are parsed and validated in slices between turns of the
 * event loop (ingest-body.ts), and the envelope is checked apart from the events:
 * envelope problems fail the request, a bad event fails only itself.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { connectionActorForKey, ingestForConnection } from '../../actors/services/ingest-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { readIngestBody, validateInSlices } from '../http/ingest-body.ts';
import type { InFlightLimiter, InFlightTicket } from '../http/in-flight.ts';
import { admittedBytes, bodyReader, closingConnection } from '../http/read-body.ts';
import { NOT_OBSERVED } from '../metrics/service-observer.ts';

/** The interface's "5 MB": 5 MiB, 5,242,880 bytes, inclusive. */
export const INGEST_BODY_BYTES_MAX = 5 * 1024 * 1024;
export const INGEST_EVENTS_MAX = 1000;
/**
 * With the day's quota spent only worker and queue events can still be taken (they do not
 * count against it), and a batch of those is small: a heartbeat for each of a connection's
 * 1,000 workers is about 0.5 MB. So a larger body is answered 429 before a byte of it is
 * read (by its declared length), or as soon as it passes this (a chunked one), and a spent
 * connection's body is always parsed in one short piece.
 */
export const QUOTA_SPENT_BODY_BYTES_MAX = 1024 * 1024;

export function ingestRoutes(deps: AppDeps, inFlight: InFlightLimiter) {
  const { engine } = deps;
  const body = bodyReader(deps);
  const observer = deps.metrics?.service ?? NOT_OBSERVED;
  return new Elysia({ name: 'ingest' }).post(
    '/api/ingest',
    async ({ request }) => {
      const startedAtMs = performance.now();
      let events: unknown[] | undefined;
      let ticket: InFlightTicket | undefined;
      try {
        const actor = connectionActorForKey(engine, bearerToken(request)); // a 401 here leaves the body unread
        const quotaSpent = actor.quotaSpent(engine.clock.nowMs());
        const bodyBytesMax = quotaSpent ? QUOTA_SPENT_BODY_BYTES_MAX : INGEST_BODY_BYTES_MAX;
        ticket = inFlight.admit(actor.connectionId, admittedBytes(request, bodyBytesMax));
        const read = await readIngestBody(body, request, bodyBytesMax, [ticket]).catch((error: unknown) => {
          // a spent connection's body past its cap (by its declared length, before a byte is read,
          // or a chunked one as soon as it passes it): the quota is the reason, not the size
          if (quotaSpent && error instanceof DomainError && error.code === 'PAYLOAD_TOO_LARGE') closingConnection(() => { throw actor.quotaRefusal(engine.clock.nowMs()); });
          throw error;
        });
        events = eventsOf(read.body);
        const verdicts = await validateInSlices(actor, events, engine.clock.nowMs(), read.refusedEvents);
        // ingestForConnection checks the connection still exists: it may have been deleted while the body arrived
        const reply = await ingestForConnection(engine, actor, events, deps.ingestTimings, verdicts);
        observer.ingestAnswered(startedAtMs, reply);
        return reply;
      } catch (error) {
        observer.ingestRefused(startedAtMs, error, events?.length ?? 0);
        throw error;
      } finally {
        ticket?.release();
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
