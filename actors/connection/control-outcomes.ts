/**
 * The commands on queues, workers and tasks and what became of them, kept per target (a
 * queue's last few pauses and cleans, a worker's quiet and stop) for the pages that show
 * them, and by command id for `GET /api/commands/{id}`. Targets are kept in the order of
 * their latest command, bounded in targets and per target, and expire with retention.
 */
import type { CommandStatus, OutcomeDetails, SettledStatus } from './command-outcomes.ts';
import { targetKeyOf, type ControlCommand } from './command-types.ts';

export interface ControlOutcome {
  command: ControlCommand;
  status: CommandStatus;
  reason: string | null;
  details: OutcomeDetails | null;
  completedAtMs: number | null;
}

/** Commands kept per queue, worker or task. */
export const CONTROLS_PER_TARGET_MAX = 10;
export const CONTROL_TARGETS_MAX = 10_000;

export class ControlOutcomes {
  /** per target key (command-types.ts, `targetKeyOf`), oldest command first */
  private readonly byTarget = new Map<string, ControlOutcome[]>();
  private readonly byId = new Map<string, ControlOutcome>();

  constructor(private readonly targetsMax = CONTROL_TARGETS_MAX) {}

  get size(): number {
    return this.byTarget.size;
  }

  get(commandId: string): ControlOutcome | undefined {
    return this.byId.get(commandId);
  }

  /** The target's commands kept, oldest first. */
  trailOf(targetKey: string): readonly ControlOutcome[] {
    return this.byTarget.get(targetKey) ?? [];
  }

  created(command: ControlCommand): void {
    this.keep({ command, status: 'pending', reason: null, details: null, completedAtMs: null });
  }

  /** Settles a pending command; returns it, or undefined when it is not kept or not pending. */
  completed(commandId: string, status: SettledStatus, reason: string | null, atMs: number | null, details: OutcomeDetails | null): ControlOutcome | undefined {
    const outcome = this.byId.get(commandId);
    if (outcome === undefined || outcome.status !== 'pending') return undefined;
    outcome.status = status;
    outcome.reason = reason;
    outcome.completedAtMs = atMs;
    outcome.details = details;
    return outcome;
  }

  expireBefore(cutoffMs: number): void {
    for (const [key, trail] of this.byTarget) {
      if (trail.at(-1)!.command.createdAtMs >= cutoffMs) break; // targets are in the order of their latest command, which is time order
      this.forget(key);
    }
  }

  toSnapshot(): ControlOutcome[] {
    return [...this.byTarget.values()].flat();
  }

  restore(outcomes: readonly ControlOutcome[]): void {
    for (const outcome of outcomes) this.keep({ ...outcome });
  }

  private keep(outcome: ControlOutcome): void {
    const key = targetKeyOf(outcome.command);
    const trail = this.byTarget.get(key) ?? [];
    this.byTarget.delete(key);
    trail.push(outcome);
    this.byId.set(outcome.command.id, outcome);
    if (trail.length > CONTROLS_PER_TARGET_MAX) this.byId.delete(trail.shift()!.command.id);
    this.byTarget.set(key, trail);
    while (this.byTarget.size > this.targetsMax) {
      const oldest = this.byTarget.keys().next().value;
      if (oldest === undefined) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    for (const kept of this.byTarget.get(key) ?? []) this.byId.delete(kept.command.id);
    this.byTarget.delete(key);
  }
}
