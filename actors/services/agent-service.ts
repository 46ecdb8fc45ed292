/** The agent side of control commands, authenticated by the connection's API key. */
import type { Command } from '../connection/command-queue.ts';
import type { Engine } from '../engine.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';

export interface PublicCommand {
  id: string;
  type: string;
  jobId: string;
  externalId: string;
  name: string;
  queue: string | null;
  createdAt: string;
}

export function pendingCommands(actor: ConnectionActor, limit: number): PublicCommand[] {
  return actor.commands.oldestFirst(limit).map(toPublicCommand);
}

export async function ackCommands(engine: Engine, actor: ConnectionActor, ids: string[]): Promise<{ acked: number }> {
  engine.refuseWhenHalted();
  const pending = [...new Set(ids)].filter((id) => actor.commands.has(id));
  if (pending.length > 0) await engine.commit({ t: 'commands.acked', connectionId: actor.connectionId, ids: pending });
  return { acked: pending.length };
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
