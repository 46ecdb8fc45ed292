/**
 * A byte-level look at a JSON body's structure while it arrives, before anything parses it.
 * `JSON.parse` holds the event loop for as long as it takes, and what it takes grows with
 * the body's structure, not only its size: 5 MB of nested brackets or one object of
 * 400,000 keys held the loop for about half a second each, 5 MB of legitimate events for a
 * few tens of ms. So every body is fed through here chunk by chunk as it is read (a few
 * microseconds per KB: string contents are skipped with a native search) and refused, the
 * rest unread, once it nests deeper or holds more members in one object or array than any
 * request of the interface needs (README "Security" > "HTTP edge").
 *
 * For ingest it also finds where each element of the top-level `events` array starts and
 * ends, so that the events can be parsed one by one between turns of the event loop (see
 * ingest-body.ts), and bounds what one event may hold, so that no single parse is long.
 * A structure limit broken inside one event (too deep, too many members in one object or
 * array) refuses that event only: the scan goes on counting its depth without keeping its
 * levels, the event is never parsed, and the others are taken. An event's bytes and values
 * (`elementBytesMax`, `elementMembersMax`) and the hostile depth stay limits of the body:
 * they are what bound the walk of such an event and end a hostile body early.
 * It does not check the grammar: `JSON.parse` of the pieces does, and the pieces are cut
 * only at the array's own brackets and commas, so they are valid exactly when the whole is.
 */
import { DomainError } from '../../actors/domain-error.ts';
import { JSON_OBJECT_BYTES_MAX, JSON_OBJECT_DEPTH_MAX } from '../../actors/ingest/json-object-limits.ts';

export interface JsonShapeLimits {
  /**
   * Containers inside containers, the outermost being level 1. Deeper inside an element of
   * the split array refuses that element; anywhere else, the body.
   */
  depthMax: number;
  /**
   * Deeper than this the body is refused wherever it is: no value a job system holds
   * nests so deep, only a hostile body, whose walk then ends at once (counting an event's
   * levels up to its values limit held the event loop about 14 ms a body).
   */
  hostileDepthMax: number;
  /** members of one object */
  objectMembersMax: number;
  /** elements of one array */
  arrayElementsMax: number;
}

/**
 * The deepest request of the interface is an ingest event's `extensions` or `metadata`
 * (8 levels) inside body, `events`, event and payload: 12 levels. A free-form object of at
 * most 64 KB serialized holds at most 13,107 members (`"":0,` is 5 bytes) and an array at
 * most 32,768 elements (`0,`). The limits are far enough beyond that no valid request
 * comes near them, and low enough that reaching one costs microseconds.
 */
export const JSON_SHAPE_LIMITS: JsonShapeLimits = {
  depthMax: 4 * JSON_OBJECT_DEPTH_MAX,
  hostileDepthMax: 32 * JSON_OBJECT_DEPTH_MAX,
  objectMembersMax: JSON_OBJECT_BYTES_MAX / 4,
  arrayElementsMax: JSON_OBJECT_BYTES_MAX,
};

export interface SplitLimits {
  /** the top-level member whose array is cut into its elements */
  key: string;
  /** bytes of one element (with the whitespace around it) */
  elementBytesMax: number;
  /** members of all objects and arrays inside one element together (its commas and containers) */
  elementMembersMax: number;
  /**
   * Content the body may carry outside the array, enforced once `envelopeCheckedFrom` bytes
   * have arrived (from where the body is sure to be parsed in pieces): past it the body is
   * refused at once, the rest unread. Absent: only counted (`outsideContentBytes`).
   */
  envelopeBytesMax?: number;
  envelopeCheckedFrom?: number;
}

/** Where the top-level array's elements are: byte offsets into the body. */
export interface SplitArray {
  /** offset of its `[` */
  start: number;
  /** offset of its `]` */
  end: number;
  /** start and end (exclusive) of each element, whitespace included, flattened */
  spans: number[];
  /** elements refused for a structure limit broken inside them, by index: what they broke */
  refused: Map<number, string>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const SPACE = 0x20;
const TAB = 0x09;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
/** strings up to this long are walked byte by byte, longer ones searched natively (see skipString) */
const SHORT_STRING_BYTES = 32;
/** a key longer than this is not the split key (which is short) */
const KEY_BYTES_KEPT = 64;

const isWhitespace = (byte: number): boolean => byte === SPACE || byte === NEWLINE || byte === RETURN || byte === TAB;

export class JsonShapeScanner {
  /** bytes of the chunks before the current one */
  private offset = 0;
  private depth = 0;
  /** commas and containers of the whole body: about its members, what a parse's time follows */
  private membersSeen = 0;
  /** per level: commas seen (members - 1), and whether the container is an object */
  private readonly commas: Int32Array;
  private readonly isObject: Uint8Array;
  private inString = false;
  /** the previous chunk ended inside a string on an unpaired backslash */
  private escapePending = false;
  // top-level keys, for the split
  private expectingKey = false;
  private keyBytes: number[] | null = null;
  private lastKeyIsSplitKey = false;
  private splitting: SplitArray | null = null;
  private split: SplitArray | null = null;
  private elementStart = 0;
  private elementHasValue = false;
  private elementMembers = 0;
  /** what the current element broke, null while it is within the limits */
  private elementRefusal: string | null = null;
  /** content bytes outside the split array (whitespace outside strings not counted) */
  private outsideBytes = 0;
  /** the string being skipped is outside the split array */
  private stringOutside = false;

  constructor(
    private readonly limits: JsonShapeLimits = JSON_SHAPE_LIMITS,
    private readonly splitLimits: SplitLimits | null = null,
  ) {
    this.commas = new Int32Array(limits.depthMax + 2);
    this.isObject = new Uint8Array(limits.depthMax + 2);
  }

  /** Looks at the next chunk; throws a 400 the moment the body is over a limit. */
  feed(chunk: Uint8Array): void {
    let i = 0;
    const length = chunk.length;
    while (i < length) {
      if (this.inString) {
        const from = i;
        i = this.keyBytes === null ? this.skipString(chunk, i) : this.skipKey(chunk, i);
        if (this.stringOutside) this.outsideBytes += i - from;
        continue;
      }
      const byte = chunk[i]!;
      if (this.splitting === null && !isWhitespace(byte)) this.outsideBytes++;
      if (byte === QUOTE) {
        this.startString();
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        this.open(byte === OPEN_OBJECT, this.offset + i);
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        this.close(this.offset + i);
      } else if (byte === COMMA) {
        this.comma(this.offset + i);
      } else if (this.splitting !== null && this.depth === 2 && !isWhitespace(byte)) {
        this.elementHasValue = true;
      }
      i++;
    }
    this.offset += length;
    // an element's size is checked as it grows (per chunk), not only at its end
    if (this.splitting !== null && this.offset - this.elementStart > this.splitLimits!.elementBytesMax) this.elementTooLarge();
    const envelopeBytesMax = this.splitLimits?.envelopeBytesMax;
    if (envelopeBytesMax !== undefined && this.outsideBytes > envelopeBytesMax && this.offset >= (this.splitLimits!.envelopeCheckedFrom ?? 0)) throw envelopeRefusal(envelopeBytesMax);
  }

  /** The top-level split array, when the body had one (the last, as JSON.parse keeps the last of a repeated key). */
  splitArray(): SplitArray | null {
    return this.split;
  }

  /** Members of all objects and arrays so far (counted as commas and containers). */
  get members(): number {
    return this.membersSeen;
  }

  /**
   * Bytes of the body outside the split array that are not whitespace between tokens: what
   * a parse of the rest of the body works through. Counted as the bytes arrive (a long
   * string by its length), so a large body needs no second walk.
   */
  get outsideContentBytes(): number {
    return this.outsideBytes;
  }

  private startString(): void {
    this.markValue();
    this.inString = true;
    this.stringOutside = this.splitting === null;
    if (this.depth === 1 && this.expectingKey && this.splitLimits !== null) this.keyBytes = [];
  }

  /**
   * Inside a string from `from`: returns where scanning goes on (past the closing quote, or
   * the chunk's end). Most strings of a body are short: a plain loop finds their end, where
   * a native search per string cost more than it saved (the scan took several times a
   * JSON.parse); a long one (a stacktrace) is searched natively for its closing quote.
   */
  private skipString(chunk: Uint8Array, from: number): number {
    const length = chunk.length;
    let i = from;
    if (this.escapePending) {
      this.escapePending = false;
      i++;
    }
    const shortEnd = Math.min(length, i + SHORT_STRING_BYTES);
    while (i < shortEnd) {
      const byte = chunk[i]!;
      if (byte === QUOTE) {
        this.inString = false;
        return i + 1;
      }
      i += byte === BACKSLASH ? 2 : 1;
    }
    if (i >= length) {
      // past the end: the chunk ended on a backslash, which escapes the next chunk's first byte
      this.escapePending = i > length;
      return length;
    }
    // `i` is not an escaped byte, so a run of backslashes counted back to it is whole
    for (let search = i; ; ) {
      const quote = chunk.indexOf(QUOTE, search);
      if (quote < 0) {
        this.escapePending = backslashRunIsOdd(chunk, length, i);
        return length;
      }
      if (!backslashRunIsOdd(chunk, quote, i)) {
        this.inString = false;
        return quote + 1;
      }
      search = quote + 1;
    }
  }

  /** A top-level key, kept to compare with the split key (few per body, so the slower way). */
  private skipKey(chunk: Uint8Array, from: number): number {
    let start = from;
    if (this.escapePending) {
      this.escapePending = false;
      this.keep(chunk, start, start + 1);
      start++;
    }
    let search = start;
    for (;;) {
      const quote = chunk.indexOf(QUOTE, search);
      if (quote < 0) {
        this.escapePending = backslashRunIsOdd(chunk, chunk.length, start);
        this.keep(chunk, start, chunk.length);
        return chunk.length;
      }
      if (backslashRunIsOdd(chunk, quote, start)) {
        search = quote + 1;
        continue;
      }
      this.keep(chunk, start, quote);
      this.endString();
      return quote + 1;
    }
  }

  private keep(chunk: Uint8Array, from: number, to: number): void {
    const kept = this.keyBytes;
    if (kept === null || kept.length > KEY_BYTES_KEPT) return;
    for (let i = from; i < to && kept.length <= KEY_BYTES_KEPT; i++) kept.push(chunk[i]!);
  }

  private endString(): void {
    this.inString = false;
    if (this.keyBytes === null) return;
    const key = this.keyBytes;
    this.keyBytes = null;
    this.expectingKey = false;
    this.lastKeyIsSplitKey = keyText(key) === this.splitLimits!.key;
    // a later member of the same name replaces the array, as it does for JSON.parse; the replaced one is the envelope's to parse
    if (this.lastKeyIsSplitKey && this.split !== null) {
      this.outsideBytes += this.split.end - this.split.start + 1;
      this.split = null;
    }
  }

  private open(object: boolean, at: number): void {
    this.markValue();
    const depth = this.depth + 1;
    this.membersSeen++;
    if (depth > this.limits.depthMax) {
      // inside an event, past the levels kept: only the depth is counted from here
      if (!this.insideElement()) throw shapeError(`must not nest more than ${this.limits.depthMax} levels deep`);
      if (depth > this.limits.hostileDepthMax) throw shapeError(`must not nest more than ${this.limits.hostileDepthMax} levels deep anywhere (an event deeper than ${this.limits.depthMax - 2} levels is refused on its own)`);
      this.refuseElement(`must not nest more than ${this.limits.depthMax - 2} levels deep (the event itself is level 1)`);
      this.depth = depth;
      this.countElementMember();
      return;
    }
    this.depth = depth;
    this.commas[depth] = 0;
    this.isObject[depth] = object ? 1 : 0;
    if (depth > 2 && this.splitting !== null) this.countElementMember();
    if (depth === 1) this.expectingKey = object;
    if (depth === 2 && !object && this.lastKeyIsSplitKey && this.isObject[1] === 1) {
      this.outsideBytes -= 1; // its `[` was counted as the envelope's before it was known to open the array
      this.splitting = { start: at, end: -1, spans: [], refused: new Map() };
      this.elementStart = at + 1;
      this.elementHasValue = false;
      this.elementMembers = 0;
      this.elementRefusal = null;
    }
    if (depth === 2) this.lastKeyIsSplitKey = false;
  }

  private close(at: number): void {
    if (this.depth === 0) return; // not JSON: the parse refuses it
    if (this.depth === 2 && this.splitting !== null) {
      if (this.elementHasValue || this.splitting.spans.length > 0) this.endElement(at);
      this.splitting.end = at;
      this.split = this.splitting;
      this.splitting = null;
    }
    this.depth--;
  }

  private comma(at: number): void {
    const depth = this.depth;
    if (depth === 0) return;
    this.membersSeen++;
    if (depth > this.limits.depthMax) {
      this.countElementMember(); // a level not kept: its element is refused already
      return;
    }
    const commas = ++this.commas[depth]!;
    if (this.isObject[depth] === 1) {
      if (commas >= this.limits.objectMembersMax) this.refuseContainer(`must not hold more than ${this.limits.objectMembersMax} members in one object`);
      if (depth === 1) {
        this.expectingKey = true;
        this.lastKeyIsSplitKey = false;
      }
    } else if (commas >= this.limits.arrayElementsMax) {
      this.refuseContainer(`must not hold more than ${this.limits.arrayElementsMax} elements in one array`);
    }
    if (this.splitting === null) return;
    if (depth === 2) {
      this.endElement(at);
      this.elementStart = at + 1;
      this.elementHasValue = false;
      this.elementMembers = 0;
      this.elementRefusal = null;
    } else {
      this.countElementMember();
    }
  }

  /** Inside an element of the split array (below the array's own level). */
  private insideElement(): boolean {
    return this.splitting !== null && this.depth >= 2;
  }

  /** A container over its member limit: inside an event, that event is refused; anywhere else, the body. */
  private refuseContainer(problem: string): void {
    if (this.depth > 2 && this.splitting !== null) this.refuseElement(problem);
    else throw shapeError(problem);
  }

  /** The first limit an element breaks is the one its refusal names. */
  private refuseElement(problem: string): void {
    this.elementRefusal ??= problem;
  }

  /** The start of a string or container: inside the split array, the current element is not empty. */
  private markValue(): void {
    if (this.splitting !== null && this.depth === 2) this.elementHasValue = true;
  }

  private countElementMember(): void {
    if (++this.elementMembers > this.splitLimits!.elementMembersMax) {
      throw shapeError(`event ${this.splitting!.spans.length / 2} must not hold more than ${this.splitLimits!.elementMembersMax} values`, this.eventField());
    }
  }

  private endElement(at: number): void {
    if (at - this.elementStart > this.splitLimits!.elementBytesMax) this.elementTooLarge();
    const split = this.splitting!;
    if (this.elementRefusal !== null) split.refused.set(split.spans.length / 2, this.elementRefusal);
    split.spans.push(this.elementStart, at);
  }

  private elementTooLarge(): never {
    throw shapeError(`event ${this.splitting!.spans.length / 2} must be at most ${this.splitLimits!.elementBytesMax} bytes`, this.eventField());
  }

  private eventField(): string {
    return `${this.splitLimits!.key}[${this.splitting!.spans.length / 2}]`;
  }
}

/** Whether the backslashes right before `end` (not before `from`) are an odd run, i.e. escape what is at `end`. */
function backslashRunIsOdd(chunk: Uint8Array, end: number, from: number): boolean {
  let run = 0;
  for (let i = end - 1; i >= from && chunk[i] === BACKSLASH; i--) run++;
  return run % 2 === 1;
}

/** A key's text, escapes resolved; null for one too long to be the split key or not a JSON string. */
function keyText(bytes: number[]): string | null {
  if (bytes.length > KEY_BYTES_KEPT) return null;
  try {
    return JSON.parse(`"${String.fromCharCode(...bytes)}"`) as string;
  } catch {
    return null;
  }
}

/** A body carrying more than `bytesMax` of content besides the split array. */
export function envelopeRefusal(bytesMax: number): DomainError {
  return shapeError(`must carry at most ${bytesMax} bytes besides its events`);
}

function shapeError(problem: string, field = 'body'): DomainError {
  return new DomainError('VALIDATION_ERROR', `request body ${problem}`, { [field]: [problem] }, undefined, { connection: 'close' });
}
