/**
 * The body of POST /api/ingest for the document. The route reads it by hand (the
 * envelope first, then each event on its own against event-schema.ts), so no route hook
 * carries it; this model is assembled from the same TypeBox parts the validator compiles.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { EventEnvelope, JobPayload, QueuePayload, WorkerPayload } from '../../actors/ingest/event-schema.ts';
import { INGEST_EVENTS_MAX } from '../routes/ingest.ts';

const eventOf = <P extends TSchema>(type: string, payloadKey: 'job' | 'worker' | 'queue', payload: P, description: string) =>
  Type.Object({ ...EventEnvelope.properties, type: Type.Literal(type), [payloadKey]: payload }, { description, title: type });

export const IngestEvent = Type.Union(
  [
    eventOf('job_state_change', 'job', JobPayload, 'A job changed state; appended to its state history'),
    eventOf('worker_state_change', 'worker', WorkerPayload, 'A worker came online, went offline, is busy or idle, or sent a heartbeat'),
    eventOf('queue_snapshot', 'queue', QueuePayload, "A queue's depth, consumers and framework-specific data now"),
  ],
  {
    description:
      '`timestamp` and the payload times: RFC 3339 with a zone (`Z` or an offset). Optional payload fields also accept null. ' +
      'An event that breaks these rules is refused on its own (counted in `rejected`, listed in `errors`); the rest of the batch goes on.',
  },
);

export const IngestBody = Type.Object({
  events: Type.Array(IngestEvent, { minItems: 1, maxItems: INGEST_EVENTS_MAX }),
});
