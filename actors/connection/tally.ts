/** Counts per value (jobs per state, per queue, ...), so single-filter totals are O(1). */
export class Tally<K> {
  private readonly counts = new Map<K, number>();

  add(key: K | null, delta: number): void {
    if (key === null) return;
    const next = (this.counts.get(key) ?? 0) + delta;
    if (next === 0) this.counts.delete(key);
    else this.counts.set(key, next);
  }

  get(key: K): number {
    return this.counts.get(key) ?? 0;
  }
}
