/**
 * The webhook sends in flight, and which waiting ones start next: a fair queue per
 * connection across one shared limit.
 *
 * - A connection has at most `perConnectionMax` sends in flight, its test notices included,
 *   so a receiver that never answers holds that connection's slots and nobody else's.
 * - The shared pool (`totalMax`) bounds sends beyond each connection's first: a connection
 *   with nothing in flight may always start one, so a pool full of other tenants' slow
 *   sends never holds back a connection's alert (and the sends in flight stay bounded by
 *   the pool plus one per connection, which accounts bound).
 * - When sends wait, the connections with the fewest in flight go first, and among those
 *   the one served longest ago: each round starts one send per connection, in that order.
 *   Within a connection, deliveries keep their queue order.
 */
export interface SendSlotLimits {
  totalMax: number;
  perConnectionMax: number;
}

export class SendSlots {
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  /** a turn counter per connection: when it last started a send */
  private readonly lastTurn = new Map<string, number>();
  private turn = 0;

  constructor(private readonly limits: SendSlotLimits) {}

  get inFlightTotal(): number {
    return this.total;
  }

  inFlightOf(connectionId: string): number {
    return this.inFlight.get(connectionId) ?? 0;
  }

  /**
   * Takes a slot for each item that may start now, fairly across connections, and returns
   * those items in the order they start; `waiting` maps each connection to its items in
   * their own order.
   */
  pick<T>(waiting: ReadonlyMap<string, readonly T[]>): T[] {
    const order = [...waiting.keys()].sort((a, b) => this.inFlightOf(a) - this.inFlightOf(b) || (this.lastTurn.get(a) ?? -1) - (this.lastTurn.get(b) ?? -1));
    const next = new Map<string, number>();
    const started: T[] = [];
    for (let progressed = true; progressed; ) {
      progressed = false;
      for (const connectionId of order) {
        const items = waiting.get(connectionId)!;
        const index = next.get(connectionId) ?? 0;
        if (index >= items.length || !this.mayStart(connectionId)) continue;
        next.set(connectionId, index + 1);
        this.take(connectionId);
        started.push(items[index]!);
        progressed = true;
      }
    }
    return started;
  }

  release(connectionId: string): void {
    const left = this.inFlightOf(connectionId) - 1;
    if (left > 0) this.inFlight.set(connectionId, left);
    else this.inFlight.delete(connectionId);
    this.total -= 1;
  }

  private mayStart(connectionId: string): boolean {
    const own = this.inFlightOf(connectionId);
    return own < this.limits.perConnectionMax && (own === 0 || this.total < this.limits.totalMax);
  }

  private take(connectionId: string): void {
    this.inFlight.set(connectionId, this.inFlightOf(connectionId) + 1);
    this.total += 1;
    this.lastTurn.set(connectionId, this.turn++);
  }
}
