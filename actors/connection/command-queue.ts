/**
 * Commands for the connection's agent: every revoke, retry and other control is queued so
 * the job system hears of it (decisions, "Agents"). In arrival order, acknowledged by id,
 * bounded, and withdrawn when no outcome came within the wait for confirmation
 * (connection-actor.ts, `decideCommandExpiry`).
 */
import { isJobCommand, type Command } from './command-types.ts';

export type { Command };

export class CommandQueue {
  private readonly pending = new Map<string, Command>();
  /** pending commands that act on a queue, worker or task (not a job): a user asks for each, so they are bounded apart */
  private controls = 0;

  constructor(private readonly commandsMax: number) {}

  get size(): number {
    return this.pending.size;
  }

  /** Pending commands acting on a queue, a worker or a task. */
  get controlSize(): number {
    return this.controls;
  }

  /**
   * Past the bound the oldest command is dropped (an agent that never polls cannot grow
   * memory); returns those dropped, which the caller settles as expired.
   */
  push(command: Command): Command[] {
    this.add(command);
    const dropped: Command[] = [];
    while (this.pending.size > this.commandsMax) {
      const oldest = this.pending.values().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
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
    for (const id of ids) {
      const command = this.pending.get(id);
      if (command === undefined) continue;
      this.remove(command);
      removed++;
    }
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
    for (const command of commands) this.add(command);
  }

  private add(command: Command): void {
    if (this.pending.has(command.id)) return;
    this.pending.set(command.id, command);
    if (!isJobCommand(command)) this.controls++;
  }

  private remove(command: Command): void {
    this.pending.delete(command.id);
    if (!isJobCommand(command)) this.controls--;
  }
}
