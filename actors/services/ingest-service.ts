/** POST /api/ingest after the envelope is checked: key -> connection -> decide -> commit. */
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import type { ConnectionActor, IngestReply } from '../connection/connection-actor.ts';
import type { IngestTimings } from './ingest-timings.ts';

export async function ingestEvents(engine: Engine, apiKey: string | null, events: readonly unknown[], timings?: IngestTimings): Promise<IngestReply> {
  engine.refuseWhenHalted();
  const startedMs = performance.now();
  const actor = connectionActorForKey(engine, apiKey);
  const { record, reply } = actor.decideIngest(events, engine.clock.nowMs());
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
  if (actor === undefined) throw new DomainError('UNAUTHORIZED', 'invalid or missing API key');
  return actor;
}
