/**
 * A key-value bucket as this node sees it through a watch: every key's last entry, and
 * since when (on this node's clock) its revision has stayed the same. That is how leases
 * and membership keys are judged lapsed without clock agreement between machines: a key
 * whose holder keeps writing changes revision, and one nobody writes stays the same.
 *
 * The watch starts with the last value of every key (their age is unknown, so each counts
 * as changed when first seen: a key of a dead node lapses one lease after this node
 * started, never sooner) and then delivers every write and delete in order. If it ends
 * (the consumer was lost with a NATS server), it is opened again; a key whose revision is
 * the same as before keeps its time.
 */
import type { KV, KvEntry } from '@nats-io/kv';
import { describeError } from '../persistence/errors.ts';

export interface ObservedKey {
  entry: KvEntry;
  /** performance.now() when this revision was first seen */
  sinceMs: number;
}

export class WatchedBucket {
  private readonly keys = new Map<string, ObservedKey>();
  private stopped = false;
  private stopWatch: (() => void) | null = null;
  private readonly revisionWaiters: Array<{ revision: number; resolve: () => void }> = [];
  private lastRevision = 0;

  private constructor(
    private readonly kv: KV,
    private readonly what: string,
    private readonly log: (line: string) => void,
    private readonly onChange: (key: string) => void,
  ) {}

  /** Starts watching; `onChange` runs after every write or delete the watch delivers. */
  static async open(kv: KV, what: string, log: (line: string) => void, onChange: (key: string) => void): Promise<WatchedBucket> {
    const watched = new WatchedBucket(kv, what, log, onChange);
    await watched.watch();
    return watched;
  }

  get(key: string): ObservedKey | undefined {
    return this.keys.get(key);
  }

  entries(): IterableIterator<[string, ObservedKey]> {
    return this.keys.entries();
  }

  /** Resolves once the watch has delivered `revision` (or later): everything written before it is then in view. */
  caughtUpTo(revision: number): Promise<void> {
    if (this.lastRevision >= revision) return Promise.resolve();
    return new Promise((resolve) => this.revisionWaiters.push({ revision, resolve }));
  }

  stop(): void {
    this.stopped = true;
    this.stopWatch?.();
  }

  private async watch(): Promise<void> {
    const iterator = await this.kv.watch();
    this.stopWatch = () => iterator.stop();
    void (async () => {
      try {
        for await (const entry of iterator) this.observe(entry);
      } catch (error) {
        this.log(`watch of ${this.what} failed: ${describeError(error)}`);
      }
      if (this.stopped) return;
      this.log(`watch of ${this.what} ended; opening it again`);
      await this.reopen();
    })();
  }

  private async reopen(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.watch();
        return;
      } catch (error) {
        if (attempt === 1) this.log(`opening the watch of ${this.what} failed (${describeError(error)}); retrying`);
        await Bun.sleep(Math.min(1_000, 100 * attempt));
      }
    }
  }

  private observe(entry: KvEntry): void {
    const known = this.keys.get(entry.key);
    if (known === undefined || known.entry.revision !== entry.revision) this.keys.set(entry.key, { entry, sinceMs: performance.now() });
    this.lastRevision = Math.max(this.lastRevision, entry.revision);
    for (let index = this.revisionWaiters.length - 1; index >= 0; index--) {
      const waiter = this.revisionWaiters[index]!;
      if (waiter.revision <= this.lastRevision) {
        this.revisionWaiters.splice(index, 1);
        waiter.resolve();
      }
    }
    this.onChange(entry.key);
  }
}
