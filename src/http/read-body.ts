/**
 * The one way a route reads its request body (routes set `parse: 'none'`): a byte cap
 * checked on `Content-Length` before anything is read and counted while reading (chunked
 * bodies carry no length), and a deadline for the whole body. Without them a client holds
 * memory per socket for as long as it likes by trickling a large body (docs/security.md,
 * "HTTP edge"). Past the cap or the deadline the stream is cancelled, which drops what
 * Bun buffered for it, and the answer closes the connection.
 */
import { DomainError } from '../../actors/domain-error.ts';
import type { AppDeps } from '../app-deps.ts';
import { JsonShapeScanner } from './json-shape.ts';
import { requestPath } from './request-path.ts';

/** Answers that leave a body unread close the connection, so Bun does not drain the rest. */
const CLOSE = { connection: 'close' };

/** Login, users, connections: a few short strings, with room for JSON escapes. */
export const FORM_BODY_BYTES_MAX = 16 * 1024;

/** Bulk revoke and retry: 100 ids of up to 64 characters, with room for escapes. */
export const BULK_BODY_BYTES_MAX = 64 * 1024;

/**
 * Runs a check made before the body is read; a refusal from it also closes the connection
 * (the unread body is not drained).
 */
export function closingConnection(check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError(error.code, error.message, error.details, error.extraBody, { ...error.headers, ...CLOSE });
  }
}

export function tooLarge(maxBytes: number): DomainError {
  return new DomainError('PAYLOAD_TOO_LARGE', `request body exceeds ${maxBytes} bytes`, undefined, undefined, CLOSE);
}

export type BodyReaderDeps = Pick<AppDeps, 'config' | 'logError'>;

/** Sees each chunk of a body as it arrives and may refuse the body by throwing (the rest is then not read). */
export interface BodyWatcher {
  feed(chunk: Uint8Array): void;
}

export interface BodyReader {
  /**
   * The body's bytes, at most `maxBytes`; throws 413, 408, or 400 for a body cut off by the
   * client. Each chunk is shown to the `watchers` as it arrives (a small body with a
   * declared length once, whole).
   */
  bytes(request: Request, maxBytes: number, watchers?: readonly BodyWatcher[]): Promise<Uint8Array>;
  /** `json`, with more watchers of the bytes than its structure check. */
  jsonWatched(request: Request, maxBytes: number, watchers: readonly BodyWatcher[]): Promise<unknown>;
  /**
   * `Content-Type: application/json` (else 415), then `bytes` with the structure checked as
   * it arrives (json-shape.ts: too deep or too many members is a 400), then JSON.parse (else 400).
   * Strings that are not well-formed Unicode are refused by validation (`validBody`, and
   * per event on ingest), since a lone surrogate would change on reload.
   */
  json(request: Request, maxBytes: number): Promise<unknown>;
}

export function bodyReader({ config, logError }: BodyReaderDeps): BodyReader {
  const bytes = (request: Request, maxBytes: number, watchers: readonly BodyWatcher[] = []) => readCapped(request, maxBytes, config.bodyTimeoutMs, logError, watchers);
  const jsonWatched = async (request: Request, maxBytes: number, watchers: readonly BodyWatcher[]) => {
    requireJsonContentType(request);
    return parseJson(await bytes(request, maxBytes, [...watchers, new JsonShapeScanner()]));
  };
  return {
    bytes,
    jsonWatched,
    json: (request, maxBytes) => jsonWatched(request, maxBytes, []),
  };
}

export function isJsonContentType(contentType: string): boolean {
  return /^application\/json\s*(;|$)/i.test(contentType);
}

export function requireJsonContentType(request: Request): void {
  const contentType = request.headers.get('content-type') ?? '';
  if (!isJsonContentType(contentType)) throw unsupportedMediaType(contentType);
}

export function unsupportedMediaType(contentType: string): DomainError {
  return new DomainError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got '${contentType.slice(0, 100) || 'none'}'`);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(strictUtf8.decode(bytes));
  } catch {
    throw notJson();
  }
}

export function notJson(): DomainError {
  return new DomainError('VALIDATION_ERROR', 'request body is not valid JSON', { body: ['must be valid JSON in UTF-8'] });
}

/**
 * Bodies declared at most this long are read whole by Bun (`arrayBuffer()`), without a
 * JavaScript stream: for a one-event ingest the stream's promise machinery cost more than
 * the rest of the request's reading. Their declared length bounds what is buffered, so
 * the cap holds; larger and chunked bodies are read as a stream, counted and cancellable.
 */
export const SMALL_BODY_BYTES_MAX = 64 * 1024;

/** The declared `Content-Length`, or null when there is none (a chunked body) or it is not a number. */
export function declaredLength(request: Request): number | null {
  const declared = request.headers.get('content-length');
  const bytes = declared === null ? null : Number(declared);
  return bytes !== null && Number.isFinite(bytes) ? bytes : null;
}

/** What a request's body will hold at most, to charge before reading it: its declared length within the cap, else nothing yet. */
export function admittedBytes(request: Request, maxBytes: number): number | null {
  const declared = declaredLength(request);
  return declared === null ? null : Math.min(declared, maxBytes);
}

async function readCapped(request: Request, maxBytes: number, timeoutMs: number, logError: (line: string) => void, watchers: readonly BodyWatcher[]): Promise<Uint8Array> {
  const declaredBytes = declaredLength(request);
  if (declaredBytes !== null && declaredBytes > maxBytes) throw tooLarge(maxBytes);
  if (declaredBytes !== null && declaredBytes <= SMALL_BODY_BYTES_MAX) {
    const whole = await readWhole(request, timeoutMs, logError);
    for (const watcher of watchers) watcher.feed(whole);
    return whole;
  }
  if (request.body === null) return new Uint8Array(0);

  const reader = request.body.getReader();
  let timedOut = false;
  // cancel() ends a pending read() with done; the flag tells a deadline from a finished body
  const deadline = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => undefined);
  }, timeoutMs);
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch (error) {
        throw aborted(request, received, error, logError);
      }
      if (timedOut) throw bodyTimeout(timeoutMs);
      if (step.done) break;
      received += step.value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(maxBytes);
      }
      try {
        for (const watcher of watchers) watcher.feed(step.value);
      } catch (refusal) {
        await reader.cancel().catch(() => undefined);
        throw refusal;
      }
      chunks.push(step.value);
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
  }
  return concat(chunks, received);
}

/** A small body with a declared length, read by Bun in one piece, within the same deadline. */
async function readWhole(request: Request, timeoutMs: number, logError: (line: string) => void): Promise<Uint8Array> {
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    deadline = setTimeout(() => reject(bodyTimeout(timeoutMs)), timeoutMs);
  });
  const whole = request.arrayBuffer();
  try {
    return new Uint8Array(await Promise.race([whole, timedOut]));
  } catch (error) {
    whole.catch(() => undefined); // past the deadline the answer closes the connection, which ends it
    if (error instanceof DomainError) throw error;
    throw aborted(request, null, error, logError);
  } finally {
    clearTimeout(deadline);
  }
}

function bodyTimeout(timeoutMs: number): DomainError {
  return new DomainError('REQUEST_TIMEOUT', `request body did not arrive within ${timeoutMs / 1000} s`, undefined, undefined, CLOSE);
}

/** A client that goes away mid-upload is routine: one line in the log, no stack trace. */
function aborted(request: Request, received: number | null, error: unknown, logError: (line: string) => void): DomainError {
  const reason = error instanceof Error ? error.message : String(error);
  const progress = received === null ? 'before its declared length arrived' : `after ${received} bytes`;
  logError(`request body aborted by the client on ${request.method} ${requestPath(request)} ${progress} (${reason.split('\n')[0]})`);
  return new DomainError('VALIDATION_ERROR', 'request body ended before it was complete', { body: ['was cut off'] }, undefined, CLOSE);
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const whole = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}
