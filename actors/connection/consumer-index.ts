/**
 * Which workers list each queue name: kept in step with worker changes so that a queue's
 * `consumers` fallback reads only the workers of that queue. Scanning every worker's
 * list for every queue made GET /api/queues cost queues x workers x queues-per-worker.
 */
export class ConsumerIndex<W> {
  private readonly byQueue = new Map<string, Set<W>>();

  /** Moves `worker` from the queues of `before` to those of `after` (either may be empty). */
  update(worker: W, before: readonly string[], after: readonly string[]): void {
    for (const name of before) {
      const workers = this.byQueue.get(name);
      if (workers === undefined) continue;
      workers.delete(worker);
      if (workers.size === 0) this.byQueue.delete(name);
    }
    for (const name of after) {
      let workers = this.byQueue.get(name);
      if (workers === undefined) this.byQueue.set(name, (workers = new Set()));
      workers.add(worker);
    }
  }

  /** The workers listing `queueName`; each once, however often its list names the queue. */
  workersOf(queueName: string): ReadonlySet<W> {
    return this.byQueue.get(queueName) ?? EMPTY;
  }

  /** Distinct queue names listed by any worker (for tests and diagnostics). */
  get queueCount(): number {
    return this.byQueue.size;
  }
}

const EMPTY: ReadonlySet<never> = new Set();
