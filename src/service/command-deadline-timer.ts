/**
 * A revoke or retry waits a bounded time for its agent's outcome (COMMAND_CONFIRM_SECONDS):
 * past it, the command is withdrawn from the agent's queue and its job shows what the job
 * system reported, with "expired unconfirmed" in its history. The withdrawal is a logged
 * record (`commands.expired`), decided here on the node that writes the connection, so
 * replay and every replica withdraw exactly the same commands.
 */
import type { Engine } from '../../actors/engine.ts';
import type { LogLine } from '../logging/log-line.ts';

/** How often the deadline is checked: a tenth of the wait, between a quarter second and 10 s, so a command is withdrawn at most that late. */
export function deadlineCheckIntervalMs(confirmMs: number): number {
  return Math.min(10_000, Math.max(250, Math.round(confirmMs / 10)));
}

/** Starts the timer for the connections `writes` names (undefined: all); returns what stops it. */
export function startCommandDeadlineTimer(engine: Engine, writes: ((connectionId: string) => boolean) | undefined, confirmMs: number, log: LogLine): () => void {
  const timer = setInterval(() => {
    // Stryker disable next-line ConditionalExpression: a halted engine refuses the commit anyway
    if (engine.halted) return;
    const nowMs = engine.clock.nowMs();
    for (const connectionId of [...engine.connectionIds()]) {
      if (writes !== undefined && !writes(connectionId)) continue;
      const record = engine.connection(connectionId)?.decideCommandExpiry(nowMs);
      if (record === null || record === undefined) continue;
      engine.commit(record).then(
        () =>
          log(`commands: ${record.ids.length} of connection ${connectionId} withdrawn, unconfirmed after ${confirmMs / 1000} s; their jobs show what the job system reported (is the agent running and polling?)`, {
            severity: 'warn',
            connectionId,
            commands: record.ids.length,
          }),
        (error: unknown) => log(`commands: withdrawing unconfirmed commands of connection ${connectionId} failed: ${String(error)}`, { severity: 'error' }),
      );
    }
  }, deadlineCheckIntervalMs(confirmMs));
  timer.unref();
  return () => clearInterval(timer);
}
