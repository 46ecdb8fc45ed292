/**
 * Retention runs as a logged record, so replay removes exactly what the live run removed.
 * Which records a run writes is the mode's (service-mode.ts): one for the whole store on a
 * single node, one per partition this node writes in cluster mode.
 */
import type { Engine, RetentionRecord } from '../../actors/engine.ts';
import type { LogLine } from '../logging/log-line.ts';

/** Starts the timer; returns what stops it. */
export function startRetentionTimer(engine: Engine, recordsAt: (atMs: number) => RetentionRecord[], intervalMs: number, log: LogLine): () => void {
  const timer = setInterval(() => {
    // Stryker disable next-line ConditionalExpression: a halted engine refuses the commit anyway, and onHalt exits the process within 100 ms
    if (engine.halted) return;
    for (const record of recordsAt(Date.now())) {
      // Stryker disable next-line ArrowFunction,StringLiteral,ObjectLiteral: a failed commit halts the engine, whose FATAL line names the cause; this line only adds context
      engine.commit(record).catch((error) => log(`retention failed: ${String(error)}`, { severity: 'error' }));
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
