/** Log records that change one connection's data. */
import type { NormalizedEvent } from '../ingest/normalized-event.ts';

export interface IngestRecord {
  t: 'ingest';
  connectionId: string;
  receivedAtMs: number;
  events: NormalizedEvent[];
}

export type JobAction = 'revoke' | 'retry';

/** A revoke or retry of jobs that passed the state rules; command ids are decided up front. */
export interface JobActionRecord {
  t: 'job.action';
  connectionId: string;
  atMs: number;
  action: JobAction;
  targets: Array<{ jobId: string; commandId: string }>;
}

export interface CommandsAckedRecord {
  t: 'commands.acked';
  connectionId: string;
  ids: string[];
}

export type ConnectionRecord = IngestRecord | JobActionRecord | CommandsAckedRecord;
