/**
 * Reads a stream written by this module back into messages. It understands the subset of
 * SSE this service writes (LF line endings, one `data:` line per message), which is what
 * tests, load scripts and black-box checks of GET /api/events/stream need.
 */

export interface SseMessage {
  /** The message as written, including its closing blank line. */
  readonly text: string;
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly retryMs?: number;
  /** The text of a comment line (`: keep-alive` gives `keep-alive`). */
  readonly comment?: string;
}

const messageTerminator = '\n\n';

// Structural, because the global and node:stream/web reader types differ under bun-types.
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(): Promise<void>;
}

export class SseMessageReader {
  readonly #reader: ChunkReader;
  readonly #decoder = new TextDecoder();
  #unparsedText = '';

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** The next message, or undefined once the stream has ended. Rejects if the stream errored. */
  async next(): Promise<SseMessage | undefined> {
    for (;;) {
      const end = this.#unparsedText.indexOf(messageTerminator);
      if (end !== -1) {
        const text = this.#unparsedText.slice(0, end + messageTerminator.length);
        this.#unparsedText = this.#unparsedText.slice(text.length);
        return parseSseMessage(text);
      }
      const { done, value } = await this.#reader.read();
      if (done || value === undefined) return undefined;
      this.#unparsedText += this.#decoder.decode(value, { stream: true });
    }
  }

  /** Skips messages until one matches; rejects if the stream ends first. */
  async nextMatching(predicate: (message: SseMessage) => boolean): Promise<SseMessage> {
    for (;;) {
      const message = await this.next();
      if (message === undefined) throw new Error('SSE stream ended before the expected message');
      if (predicate(message)) return message;
    }
  }

  /** The next `count` messages that carry an event name (skipping comments and `retry:`). */
  async nextEvents(count: number): Promise<SseMessage[]> {
    const events: SseMessage[] = [];
    while (events.length < count) events.push(await this.nextMatching((message) => message.event !== undefined));
    return events;
  }

  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

export function parseSseMessage(text: string): SseMessage {
  const fields: { -readonly [Key in keyof SseMessage]: SseMessage[Key] } = { text };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith(':')) {
      fields.comment = line.slice(1).trimStart();
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    // The spec strips exactly one space after the colon.
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'id') fields.id = value;
    else if (name === 'event') fields.event = value;
    else if (name === 'data') fields.data = fields.data === undefined ? value : `${fields.data}\n${value}`;
    else if (name === 'retry') fields.retryMs = Number(value);
  }
  return fields;
}
