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

/**
 * The agent's acknowledgement: `ids` were carried out, `failed` were not (with the
 * agent's reason). Both name pending commands only. Records written before outcomes
 * existed carry neither `failed` nor `atMs`.
 */
export interface CommandsAckedRecord {
  t: 'commands.acked';
  connectionId: string;
  ids: string[];
  failed?: Array<{ id: string; reason: string | null }>;
  atMs?: number;
}

/**
 * Pending commands no outcome came for within the wait for confirmation (written by the
 * node that writes the connection, `decideCommandExpiry`): withdrawn from the agent's
 * queue, and their jobs shown as the job system last reported them.
 */
export interface CommandsExpiredRecord {
  t: 'commands.expired';
  connectionId: string;
  atMs: number;
  ids: string[];
}

export type ConnectionRecord = IngestRecord | JobActionRecord | CommandsAckedRecord | CommandsExpiredRecord;
