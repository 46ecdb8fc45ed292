/**
 * Control commands for the connection's agent: every revoke or retry is queued so the
 * job system hears of it (decisions, "Agents"). In arrival order, acknowledged by id,
 * bounded, and withdrawn when no outcome came within the wait for confirmation
 * (connection-actor.ts, `decideCommandExpiry`).
 */
import type { JobAction } from './connection-records.ts';

export interface Command {
  id: string;
  type: JobAction;
  jobId: string;
  externalId: string;
  name: string;
  queue: string | null;
  createdAtMs: number;
}

export class CommandQueue {
  private readonly pending = new Map<string, Command>();

  constructor(private readonly commandsMax: number) {}

  get size(): number {
    return this.pending.size;
  }

  /**
   * Past the bound the oldest command is dropped (an agent that never polls cannot grow
   * memory); returns those dropped, which the caller settles as expired.
   */
  push(command: Command): Command[] {
    this.pending.set(command.id, command);
    const dropped: Command[] = [];
    while (this.pending.size > this.commandsMax) {
      const oldest = this.pending.values().next().value;
      if (oldest === undefined) break;
      this.pending.delete(oldest.id);
      dropped.push(oldest);
    }
    return dropped;
  }

  has(id: string): boolean {
    return this.pending.has(id);
  }

  get(id: string): Command | undefined {
    return this.pending.get(id);
  }

  oldestFirst(limit: number): Command[] {
    const commands: Command[] = [];
    for (const command of this.pending.values()) {
      if (commands.length >= limit) break;
      commands.push(command);
    }
    return commands;
  }

  /** Returns how many of the ids were pending; unknown ids are ignored so acks can be retried. */
  ack(ids: readonly string[]): number {
    let removed = 0;
    for (const id of ids) if (this.pending.delete(id)) removed++;
    return removed;
  }

  /** The ids of up to `limit` commands created before `cutoffMs`, oldest first. */
  createdBefore(cutoffMs: number, limit = Number.POSITIVE_INFINITY): string[] {
    const ids: string[] = [];
    for (const command of this.pending.values()) {
      if (command.createdAtMs >= cutoffMs || ids.length >= limit) break; // arrival order is time order
      ids.push(command.id);
    }
    return ids;
  }

  toSnapshot(): Command[] {
    return [...this.pending.values()];
  }

  restore(commands: Command[]): void {
    for (const command of commands) this.pending.set(command.id, command);
  }
}
