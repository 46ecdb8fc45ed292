/** Log records that change one connection's data. */
import type { NormalizedEvent } from '../ingest/normalized-event.ts';
import type { Framework } from '../ingest/states.ts';
import type { MarkerRecord } from '../metrics/markers.ts';
import type { ControlSupport } from './agent-capabilities.ts';
import type { OutcomeDetails } from './command-outcomes.ts';
import type { ControlCommand, JobCommandType } from './command-types.ts';

export interface IngestRecord {
  t: 'ingest';
  connectionId: string;
  receivedAtMs: number;
  events: NormalizedEvent[];
}

/** The contract's two actions; the other job commands share their record (`JobActionRecord`). */
export type JobAction = 'revoke' | 'retry';

/** A command on jobs that passed the state rules (revoke, retry, run now, delete, kill); command ids are decided up front. */
export interface JobActionRecord {
  t: 'job.action';
  connectionId: string;
  atMs: number;
  action: JobCommandType;
  targets: Array<{ jobId: string; commandId: string }>;
}

/** A command on a queue, a worker or a task, as the agent will receive it (its `createdAtMs` is the record's `atMs`). */
export interface ControlRequestedRecord {
  t: 'control.requested';
  connectionId: string;
  atMs: number;
  command: ControlCommand;
}

/** One command's outcome as the agent reported it. */
export interface AckedOutcome {
  id: string;
  status: 'done' | 'failed' | 'unsupported';
  reason: string | null;
  details?: OutcomeDetails;
}

/**
 * The agent's acknowledgement: `ids` were carried out, `failed` were not (with the
 * agent's reason), `outcomes` say either or `unsupported`, with details. All name pending
 * commands only. Records written before outcomes existed carry neither `failed` nor `atMs`,
 * and before the controls no `outcomes`.
 */
export interface CommandsAckedRecord {
  t: 'commands.acked';
  connectionId: string;
  ids: string[];
  failed?: Array<{ id: string; reason: string | null }>;
  outcomes?: AckedOutcome[];
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

/** What an agent of one framework said it can do, when it started (`PUT /api/agent/capabilities`). */
export interface CapabilitiesRecord {
  t: 'agent.capabilities';
  connectionId: string;
  atMs: number;
  framework: Framework;
  agentVersion: string;
  controls: Record<string, ControlSupport>;
}

export type ConnectionRecord = IngestRecord | JobActionRecord | ControlRequestedRecord | CommandsAckedRecord | CommandsExpiredRecord | CapabilitiesRecord | MarkerRecord;
