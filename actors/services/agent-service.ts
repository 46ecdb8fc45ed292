/** The agent side of control commands, authenticated by the connection's API key. */
import type { AgentCapabilities, ControlSupport } from '../connection/agent-capabilities.ts';
import type { OutcomeDetails } from '../connection/command-outcomes.ts';
import type { Command, ControlCommand, JobCommand } from '../connection/command-types.ts';
import type { AckedOutcome, CommandsAckedRecord } from '../connection/connection-records.ts';
import type { Engine } from '../engine.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { Framework } from '../ingest/states.ts';

export const ACK_REASON_CHARS_MAX = 1000;

/** A command as the agent receives it: the command with `createdAt` as an ISO time. */
export type PublicCommand = DistributiveWithCreatedAt<JobCommand> | DistributiveWithCreatedAt<ControlCommand>;
type DistributiveWithCreatedAt<T> = T extends unknown ? Omit<T, 'createdAtMs'> & { createdAt: string } : never;

/** What the agent says became of one command. */
export interface AckOutcome {
  id: string;
  status: 'done' | 'failed' | 'unsupported';
  reason: string | null;
  details?: OutcomeDetails;
}

/** An agent's report of what it can do, as it sends it. */
export interface CapabilitiesReport {
  framework: Framework;
  agentVersion: string;
  controls: Record<string, ControlSupport>;
}

export interface PublicCapabilities {
  connectionId: string;
  framework: string;
  agentVersion: string;
  reportedAt: string;
  controls: Record<string, ControlSupport>;
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
  const settled: AckedOutcome[] = [];
  for (const outcome of outcomes) {
    if (seen.has(outcome.id) || !actor.commands.has(outcome.id)) continue;
    seen.add(outcome.id);
    const { id, status, reason, details } = outcome;
    settled.push(details === undefined ? { id, status, reason } : { id, status, reason, details });
  }
  if (seen.size === 0) return { acked: 0 };
  const record: CommandsAckedRecord = { t: 'commands.acked', connectionId: actor.connectionId, ids: [], outcomes: settled, atMs: engine.clock.nowMs() };
  await engine.commit(record);
  return { acked: seen.size };
}

/** Keeps what an agent says it supports (a record when it says something new) and answers what is kept. */
export async function reportCapabilities(engine: Engine, actor: ConnectionActor, report: CapabilitiesReport): Promise<PublicCapabilities> {
  engine.refuseWhenHalted();
  const record = actor.decideCapabilities(report, engine.clock.nowMs());
  if (record !== null) await engine.commit(record);
  return toPublicCapabilities(actor.connectionId, actor.capabilities.get(report.framework)!);
}

export function toPublicCapabilities(connectionId: string, kept: AgentCapabilities): PublicCapabilities {
  return { connectionId, framework: kept.framework, agentVersion: kept.agentVersion, reportedAt: new Date(kept.reportedAtMs).toISOString(), controls: kept.controls };
}

export function toPublicCommand(command: Command): PublicCommand {
  const { createdAtMs, ...rest } = command;
  return { ...rest, createdAt: new Date(createdAtMs).toISOString() } as PublicCommand;
}
