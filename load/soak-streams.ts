/**
 * The soak test's dashboards: streams that read every event and, one at a time, reconnect
 * with Last-Event-ID the way EventSource does. The time from the request to the first
 * chunk (the preamble and the replay) is recorded as kind `stream`; a replay that starts
 * with `event: reset`, or a stream the server ends, is a problem.
 */
import type { Service } from './service.ts';
import type { SoakRecorder } from './soak-stats.ts';
import { fmtBytes, fmtCount } from './util.ts';

const OPEN_TIMEOUT_MS = 10_000;
const eventIdLine = /^id: (\S+)$/gm;

// Structural, because the global and node:stream/web reader types differ under bun-types.
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
}

interface Slot {
  controller: AbortController | null;
  reading: Promise<void>;
  lastEventId: string | undefined;
  /** set before this side aborts, so that the end is not counted as the server's */
  stopping: boolean;
}

export class SoakStreams {
  readonly #slots: Slot[];
  #turn = 0;
  #closing = false;
  #events = 0;
  #bytes = 0;
  #resumes = 0;

  constructor(
    private readonly service: Service,
    private readonly recorder: SoakRecorder,
    count: number,
  ) {
    this.#slots = Array.from({ length: count }, () => ({ controller: null, reading: Promise.resolve(), lastEventId: undefined, stopping: false }));
  }

  async open(): Promise<void> {
    for (const slot of this.#slots) await this.#connect(slot);
  }

  /** Closes the next stream in turn and resumes it from the last id it saw. */
  reconnectNext(): void {
    const slot = this.#slots[this.#turn++ % this.#slots.length];
    if (slot === undefined || slot.controller === null || this.#closing) return;
    slot.stopping = true;
    slot.controller.abort();
    slot.controller = null;
    void slot.reading.then(() => {
      this.#resumes++;
      return this.#connect(slot);
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const slot of this.#slots) {
      slot.stopping = true;
      slot.controller?.abort();
    }
    await Promise.allSettled(this.#slots.map((slot) => slot.reading));
  }

  summary(): string {
    return `${this.#slots.length} open, ${fmtCount(this.#events)} events and ${fmtBytes(this.#bytes)} received, ${this.#resumes} resumes with Last-Event-ID`;
  }

  async #connect(slot: Slot): Promise<void> {
    if (this.#closing) return;
    const controller = new AbortController();
    slot.controller = controller;
    slot.stopping = false;
    const headers: Record<string, string> = { cookie: this.service.cookie, accept: 'text/event-stream' };
    if (slot.lastEventId !== undefined) headers['last-event-id'] = slot.lastEventId;
    const started = performance.now();
    const openTimer = setTimeout(() => controller.abort(), OPEN_TIMEOUT_MS);
    try {
      const response = await fetch(`${this.service.baseUrl}/api/events/stream`, { headers, signal: controller.signal });
      if (response.status !== 200 || response.body === null) {
        this.recorder.record('stream', performance.now() - started, response.status);
        this.recorder.problem('stream', response.status >= 500 ? 'HTTP 5xx' : 'unexpected HTTP 4xx');
        await response.body?.cancel().catch(() => undefined);
        return;
      }
      const reader = response.body.getReader();
      const first = await reader.read();
      clearTimeout(openTimer);
      this.recorder.record('stream', performance.now() - started, response.status);
      slot.reading = this.#read(slot, reader, first.value);
    } catch {
      clearTimeout(openTimer);
      if (slot.stopping || this.#closing) return;
      this.recorder.record('stream', performance.now() - started, 0);
      this.recorder.problem('stream', 'network error or timeout');
    }
  }

  async #read(slot: Slot, reader: ChunkReader, firstChunk: Uint8Array | undefined): Promise<void> {
    const decoder = new TextDecoder();
    let partialLine = '';
    const take = (chunk: Uint8Array): void => {
      this.#bytes += chunk.byteLength;
      const text = partialLine + decoder.decode(chunk, { stream: true });
      const end = text.lastIndexOf('\n') + 1;
      partialLine = text.slice(end);
      const lines = text.slice(0, end);
      if (lines.includes('event: reset\n')) this.recorder.problem('stream', 'stream resumed with reset');
      for (const match of lines.matchAll(eventIdLine)) {
        this.#events++;
        slot.lastEventId = match[1];
      }
    };
    try {
      if (firstChunk !== undefined) take(firstChunk);
      for (;;) {
        const { done, value } = await reader.read();
        if (done || value === undefined) break;
        take(value);
      }
    } catch {
      // aborted by this side, or cut by the server (told apart below)
    }
    if (slot.stopping || this.#closing) return;
    this.recorder.problem('stream', 'stream ended by the server');
    this.#resumes++;
    await this.#connect(slot); // as EventSource would
  }
}
