/**
 * One copy of each repeated string (task names, queues, worker ids): JSON parsing makes
 * a new string for every event, and a million jobs would otherwise hold a million copies
 * of a few dozen names. Bounded, so a client sending endless distinct names cannot grow
 * it: past the bound strings are simply not shared.
 */
export class StringPool {
  private readonly strings = new Map<string, string>();

  constructor(private readonly stringsMax: number) {}

  intern(value: string): string {
    const shared = this.strings.get(value);
    if (shared !== undefined) return shared;
    if (this.strings.size < this.stringsMax) this.strings.set(value, value);
    return value;
  }
}
