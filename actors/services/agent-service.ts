/** The agent side of control commands, authenticated by the connection's API key. */
import type { Command } from '../connection/command-queue.ts';
import type { CommandsAckedRecord } from '../connection/connection-records.ts';
import type { Engine } from '../engine.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';

export const ACK_REASON_CHARS_MAX = 1000;

export interface PublicCommand {
  id: string;
  type: string;
  jobId: string;
  externalId: string;
  name: string;
  queue: string | null;
  createdAt: string;
}

/** What the agent says became of one command. */
export interface AckOutcome {
  id: string;
  status: 'done' | 'failed';
  reason: string | null;
}

export function pendingCommands(actor: ConnectionActor, limit: number): PublicCommand[] {
  return actor.commands.oldestFirst(limit).map(toPublicCommand);
}

/**
 * Records the outcomes of pending commands; unknown or already acknowledged ids are
 * ignored so an ack can be retried. An id listed twice counts once, as first listed.
 */
export async function ackCommands(engine: Engine, actor: ConnectionActor, outcomes: AckOutcome[]): Promise<{ acked: number }> {
  engine.refuseWhenHalted();
  const seen = new Set<string>();
  const done: string[] = [];
  const failed: Array<{ id: string; reason: string | null }> = [];
  for (const outcome of outcomes) {
    if (seen.has(outcome.id) || !actor.commands.has(outcome.id)) continue;
    seen.add(outcome.id);
    if (outcome.status === 'done') done.push(outcome.id);
    else failed.push({ id: outcome.id, reason: outcome.reason });
  }
  if (seen.size === 0) return { acked: 0 };
  const record: CommandsAckedRecord = { t: 'commands.acked', connectionId: actor.connectionId, ids: done, atMs: engine.clock.nowMs() };
  if (failed.length > 0) record.failed = failed;
  await engine.commit(record);
  return { acked: seen.size };
}

function toPublicCommand(command: Command): PublicCommand {
  return {
    id: command.id,
    type: command.type,
    jobId: command.jobId,
    externalId: command.externalId,
    name: command.name,
    queue: command.queue,
    createdAt: new Date(command.createdAtMs).toISOString(),
  };
}
