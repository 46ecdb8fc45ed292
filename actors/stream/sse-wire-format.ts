// The Server-Sent Events text this service writes. Every message is built here so the
// framing (field names, the blank line that ends a message) lives in one place.

export type StreamEventName = 'job' | 'worker' | 'queue' | 'command';

const utf8 = new TextEncoder();

/** Clients wait this long before reconnecting after the stream ends or breaks. */
export const reconnectDelayMs = 3000;

/** First bytes of every stream. */
export const streamPreambleBytes: Uint8Array = utf8.encode(`retry: ${reconnectDelayMs}\n\n`);

/** Tells a resuming client that events were lost and it must refetch its state. */
export const resetMessageBytes: Uint8Array = utf8.encode('event: reset\ndata: {}\n\n');

/** A comment line: ignored by EventSource, but it keeps proxies from timing out idle streams. */
export const keepAliveCommentBytes: Uint8Array = utf8.encode(': keep-alive\n\n');

/**
 * JSON never contains a raw line break (JSON.stringify escapes CR and LF), so the payload
 * always fits on one `data:` line.
 */
export function encodeEventMessage(id: string, event: StreamEventName, data: unknown): Uint8Array {
  return utf8.encode(`id: ${id}\nevent: ${event}\ndata: ${serializeEventData(data)}\n\n`);
}

function serializeEventData(data: unknown): string {
  const json = JSON.stringify(data);
  // undefined, functions and symbols have no JSON text; `data: undefined` would reach clients.
  if (json === undefined) throw new TypeError(`stream event data is not JSON-serializable: ${typeof data}`);
  return json;
}
