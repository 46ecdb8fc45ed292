/** A published event as kept for replay: its id and its encoded wire bytes. */
export interface BufferedEvent {
  readonly id: string;
  readonly bytes: Uint8Array;
}

/**
 * The last events of one hub, oldest first, for Last-Event-ID resume: at most
 * `capacityEvents` of them and at most `capacityBytes` of encoded wire bytes, whichever
 * bound is reached first (large list items would otherwise make the count alone cost
 * hundreds of MB per connection). An event larger than `capacityBytes` is not kept at all.
 *
 * Besides the events it tracks a floor id: every event after the floor is still here.
 * At first the floor is an id issued when the hub was created (nothing older belongs to
 * this hub's life); after an eviction it is the evicted event's id. So a client that has
 * seen everything up to some id at or above the floor can be resumed exactly, whether or
 * not that id itself is still buffered (or ever came from this hub).
 */
export class EventRingBuffer {
  readonly #slots: (BufferedEvent | undefined)[];
  readonly #capacityBytes: number;
  #oldestSlot = 0;
  #size = 0;
  #bytes = 0;
  #floorId: string;

  constructor(capacityEvents: number, capacityBytes: number, floorId: string) {
    this.#slots = new Array<BufferedEvent | undefined>(capacityEvents).fill(undefined);
    this.#capacityBytes = capacityBytes;
    this.#floorId = floorId;
  }

  get size(): number {
    return this.#size;
  }

  /** Encoded bytes of the buffered events. */
  get byteSize(): number {
    return this.#bytes;
  }

  /**
   * Forgets every event and moves the floor to `floorId`: events were left unpublished
   * (nobody was watching), so a client that saw anything before must reset.
   */
  restartAt(floorId: string): void {
    this.#slots.fill(undefined);
    this.#oldestSlot = 0;
    this.#size = 0;
    this.#bytes = 0;
    this.#floorId = floorId;
  }

  /** Ids must arrive in strictly increasing order; lookups binary-search on them. */
  append(event: BufferedEvent): void {
    const eventBytes = event.bytes.byteLength;
    if (eventBytes > this.#capacityBytes) {
      // Evicted on arrival: nothing up to and including it can be replayed.
      this.restartAt(event.id);
      return;
    }
    const capacity = this.#slots.length;
    while (this.#size === capacity || this.#bytes + eventBytes > this.#capacityBytes) this.#evictOldest();
    this.#slots[(this.#oldestSlot + this.#size) % capacity] = event;
    this.#size += 1;
    this.#bytes += eventBytes;
  }

  #evictOldest(): void {
    const oldest = this.#at(0);
    this.#floorId = oldest.id;
    this.#slots[this.#oldestSlot] = undefined; // let the bytes be collected
    this.#oldestSlot = (this.#oldestSlot + 1) % this.#slots.length;
    this.#size -= 1;
    this.#bytes -= oldest.bytes.byteLength;
  }

  /**
   * Every buffered event with an id greater than `id`, oldest first; undefined when some
   * event after `id` may have been evicted or predates this buffer (the caller resets).
   */
  eventsAfter(id: string): BufferedEvent[] | undefined {
    if (id < this.#floorId) return undefined;
    const events: BufferedEvent[] = [];
    for (let index = this.#firstIndexAfter(id); index < this.#size; index += 1) events.push(this.#at(index));
    return events;
  }

  #firstIndexAfter(id: string): number {
    let low = 0;
    let high = this.#size;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#at(middle).id <= id) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** `index` counts from the oldest event. */
  #at(index: number): BufferedEvent {
    const event = this.#slots[(this.#oldestSlot + index) % this.#slots.length];
    if (event === undefined) throw new Error(`EventRingBuffer: no event at index ${index} of ${this.#size}`);
    return event;
  }
}
