import { monotonicFactory, type ULIDFactory } from 'ulid';

/**
 * Hands out stream event ids: ULIDs that strictly increase, even within one millisecond
 * and even when the clock steps back (ulid's monotonic factory then increments the random
 * part of the last id).
 *
 * One sequence is shared by every hub in the process (`processEventIdSequence`), so ids are
 * strictly increasing across hubs in publish order. A subscription that watches several
 * hubs relies on that to resume all of them from one Last-Event-ID (see subscribe-many.ts).
 */
export class EventIdSequence {
  readonly #nextUlid: ULIDFactory = monotonicFactory();
  #lastIssuedId = '';

  next(nowMs: number): string {
    // encodeTime rejects fractional milliseconds; the seed only needs millisecond precision.
    const id = flattenString(this.#nextUlid(Math.floor(nowMs)));
    this.#lastIssuedId = id;
    return id;
  }

  /** False for ids this process never issued, such as ids from before a restart's clock jump. */
  hasIssued(id: string): boolean {
    return isCanonicalUlid(id) && id <= this.#lastIssuedId;
  }
}

export const processEventIdSequence = new EventIdSequence();

// Uppercase Crockford base32, first character at most 7 (48-bit time). Lowercase ids are
// rejected rather than normalised because resume compares ids as strings.
const canonicalUlidPattern = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function isCanonicalUlid(text: string): boolean {
  return canonicalUlidPattern.test(text);
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * ulid builds its ids one character at a time, which leaves a rope of small strings that
 * stays a rope even after being read: in Bun 1.4.5, 1M retained ids took ~380 B each
 * against ~54 B flat. A round trip through bytes yields one flat string (~0.4 us).
 */
function flattenString(text: string): string {
  return utf8Decoder.decode(utf8Encoder.encode(text));
}
