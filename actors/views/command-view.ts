/**
 * A command as the dashboard sees it: what it acts on, what it asked, and what became of
 * it. `GET /api/commands/{id}` answers it, the live stream's `command` event carries it
 * when a command is made and when it is settled, and a queue's or worker's view lists its
 * latest.
 */
import { isoOrNull } from '../clock.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { CommandOutcome, CommandStatus, OutcomeDetails } from '../connection/command-outcomes.ts';
import type { CommandParams, CommandType, ControlCommand } from '../connection/command-types.ts';
import type { ControlOutcome } from '../connection/control-outcomes.ts';

export type CommandTarget =
  | { kind: 'job'; jobId: string }
  | { kind: 'queue'; queue: string }
  | { kind: 'worker'; workerId: string; hostname: string; pid: number | null }
  | { kind: 'task'; name: string; queue: string | null };

export interface CommandView {
  id: string;
  connectionId: string;
  type: CommandType;
  target: CommandTarget;
  params: CommandParams | null;
  /** `pending` until the agent reports; `done`, `failed` or `unsupported` as it reported; `expired` when no outcome came within the wait */
  status: CommandStatus;
  reason: string | null;
  details: OutcomeDetails | null;
  createdAt: string;
  completedAt: string | null;
}

/** A kept command of the connection by its id; undefined when none is kept. */
export function commandViewOf(actor: ConnectionActor, commandId: string): CommandView | undefined {
  const control = actor.controlOutcomes.get(commandId);
  if (control !== undefined) return toControlView(actor.connectionId, control);
  const job = actor.commandOutcomes.byCommand(commandId);
  return job === undefined ? undefined : toJobCommandView(actor.connectionId, job);
}

export function toControlView(connectionId: string, outcome: ControlOutcome): CommandView {
  const { command } = outcome;
  return {
    id: command.id,
    connectionId,
    type: command.type,
    target: targetOf(command),
    params: command.params ?? null,
    status: outcome.status,
    reason: outcome.reason,
    details: outcome.details,
    createdAt: new Date(command.createdAtMs).toISOString(),
    completedAt: isoOrNull(outcome.completedAtMs),
  };
}

function toJobCommandView(connectionId: string, outcome: CommandOutcome): CommandView {
  return {
    id: outcome.commandId,
    connectionId,
    type: outcome.type,
    target: { kind: 'job', jobId: outcome.jobId },
    params: null,
    status: outcome.status,
    reason: outcome.reason,
    details: outcome.details ?? null,
    createdAt: new Date(outcome.createdAtMs).toISOString(),
    completedAt: isoOrNull(outcome.completedAtMs),
  };
}

function targetOf(command: ControlCommand): CommandTarget {
  switch (command.type) {
    case 'worker.quiet':
    case 'worker.stop':
    case 'worker.pool':
      return { kind: 'worker', workerId: command.workerId, hostname: command.hostname, pid: command.pid };
    case 'task.rate_limit':
      return { kind: 'task', name: command.name, queue: command.queue };
    default:
      return { kind: 'queue', queue: command.queue };
  }
}
