/**
 * Bounded memory of recently accepted event keys. `has` does not refresh recency, so
 * the cache content depends only on the order of accepted events: replay rebuilds it.
 */
import { LRUCache } from 'lru-cache';

export class DedupCache {
  private readonly keys: LRUCache<string, true>;

  constructor(keysMax: number) {
    this.keys = new LRUCache<string, true>({ max: keysMax });
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.set(key, true);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Oldest first, so restoring in order reproduces the eviction order. */
  toSnapshot(): string[] {
    return [...this.keys.rkeys()];
  }

  restore(keys: string[]): void {
    this.keys.clear();
    for (const key of keys) this.keys.set(key, true);
  }
}
