/** Log records that change one connection's data. */
import type { NormalizedEvent } from '../ingest/normalized-event.ts';

export interface IngestRecord {
  t: 'ingest';
  connectionId: string;
  receivedAtMs: number;
  events: NormalizedEvent[];
}

export type ConnectionRecord = IngestRecord;
