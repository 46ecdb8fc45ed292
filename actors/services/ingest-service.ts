/** POST /api/ingest after the envelope is checked: key -> connection -> decide -> commit. */
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import type { ConnectionActor, IngestReply } from '../connection/connection-actor.ts';
import type { IngestTimings } from './ingest-timings.ts';
import type { EventVerdict } from '../ingest/validate-event.ts';

export async function ingestEvents(engine: Engine, apiKey: string | null, events: readonly unknown[], timings?: IngestTimings): Promise<IngestReply> {
  engine.refuseWhenHalted(); // before the key: a halted engine answers 503 to any key
  return ingestForConnection(engine, connectionActorForKey(engine, apiKey), events, timings);
}

/**
 * Ingest for a connection resolved from its key earlier (the route does so before reading
 * the body, and hashing the key again per request was measurable). `verdicts`: the events
 * already validated by the route (in slices between turns of the event loop). The connection may have
 * been deleted while the body arrived: its actor then is no longer the engine's, and the
 * request is refused as the key lookup would refuse it (ids and keys are never reused).
 */
export async function ingestForConnection(
  engine: Engine,
  actor: ConnectionActor,
  events: readonly unknown[],
  timings?: IngestTimings,
  verdicts?: readonly EventVerdict[],
): Promise<IngestReply> {
  engine.refuseWhenHalted();
  const startedMs = performance.now();
  if (engine.connection(actor.connectionId) !== actor) throw invalidKey();
  const { record, reply } = actor.decideIngest(events, engine.clock.nowMs(), verdicts);
  if (record === null) return reply;
  const durable = engine.commit(record); // appends and applies before its first await
  const workedMs = performance.now();
  await durable;
  timings?.work.add(workedMs - startedMs);
  timings?.durableWait.add(performance.now() - workedMs);
  return reply;
}

/** The connection an API key belongs to, or a 401. */
export function connectionActorForKey(engine: Engine, apiKey: string | null): ConnectionActor {
  const connection = apiKey === null ? undefined : engine.accounts.connectionByKey(apiKey);
  const actor = connection === undefined ? undefined : engine.connection(connection.id);
  if (actor === undefined) throw invalidKey();
  return actor;
}

const invalidKey = (): DomainError => new DomainError('UNAUTHORIZED', 'invalid or missing API key');
