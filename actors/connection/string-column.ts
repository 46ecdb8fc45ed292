/**
 * One string per row, kept as bytes in one shared buffer rather than as a string each: a
 * job's id and its externalId. A million 36-character strings cost ~80 bytes each as
 * JavaScript strings (a cell, the characters behind a header, a slot in an array) and are
 * two million things for the collector to visit; here each is its characters plus 6 bytes,
 * and a restart copies a snapshot's joined ids in one pass instead of slicing a string per
 * row.
 *
 * Characters are stored one byte each (every code unit below 256, as ids and nearly every
 * externalId are). A string with a wider character, or one that would not fit the buffer's
 * 4 GiB of offsets, is kept whole in a map instead: rare, and correct either way.
 *
 * Comparisons read the bytes in place, by UTF-16 code unit as JavaScript's `<` orders
 * strings, so the indexes' tie-break by id and the externalId lookup make no string.
 * Freed rows leave their bytes behind until they add up to half the buffer; then the live
 * strings are copied into a buffer of their size (compaction), in row order.
 */

import { assert } from '../domain-error.ts';

/** `length` of a row that holds no string. */
const NO_STRING = 0xffff;
/** `length` of a row whose string is kept in `wide`. */
const WIDE = 0xfffe;
/** Longer strings go to `wide` (no string the contract allows is this long). */
const LENGTH_MAX = 0xfffd;
const OFFSET_LIMIT = 2 ** 32;
const SMALLEST_BUFFER = 256;
/** Freed bytes below this never trigger a compaction: a small column is not worth copying. */
const COMPACT_MIN_BYTES = 64 * 1024;

export class StringColumn {
  private bytes: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  /** the same bytes as a Buffer, for its native Latin-1 decoding and encoding */
  private view: Buffer = Buffer.alloc(0);
  /** bytes[0 .. used) hold strings, some of them freed */
  private used = 0;
  /** bytes of freed strings inside [0, used) */
  private freed = 0;
  private start = new Uint32Array(0);
  private length = new Uint16Array(0);
  private readonly wide = new Map<number, string>();

  /** Makes rows [0, rows) usable; new rows hold no string. */
  ensureRows(rows: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: growing when not needed only copies the per-row arrays once more
    if (rows <= this.length.length) return;
    const start = new Uint32Array(rows);
    start.set(this.start);
    const length = new Uint16Array(rows).fill(NO_STRING);
    length.set(this.length);
    this.start = start;
    this.length = length;
  }

  /** Whether the row holds a string. */
  has(row: number): boolean {
    return row < this.length.length && this.length[row] !== NO_STRING;
  }

  /** Puts `value` into a row that holds no string. */
  set(row: number, value: string): void {
    assert(!this.has(row), `row ${row} of a string column already holds a string: clear it first`);
    const count = value.length;
    // Stryker disable next-line EqualityOperator,ArithmeticOperator,ConditionalExpression: the 4 GiB bound no test reaches; a string at it kept whole reads back the same
    if (count > LENGTH_MAX || this.used + count > OFFSET_LIMIT || !this.write(value, count)) {
      this.wide.set(row, value);
      this.length[row] = WIDE;
      return;
    }
    this.start[row] = this.used;
    this.length[row] = count;
    this.used += count;
  }

  /**
   * Fills rows [first, first + lengths.length), each holding no string, from all of their
   * strings joined in row order (a snapshot's column): Latin-1 bytes, copied as they are, or
   * a string, whose characters are copied when each fits a byte.
   */
  setJoined(first: number, joined: string | Uint8Array, lengths: Uint32Array): void {
    const bytes = typeof joined === 'string' ? latin1Bytes(joined) : joined;
    // Stryker disable next-line ConditionalExpression,BooleanLiteral,LogicalOperator,EqualityOperator,ArithmeticOperator,MethodExpression,ArrowFunction,BlockStatement: the row by row path below gives the same rows, only slower (and the 4 GiB bound no test reaches)
    if (bytes !== null && this.used + bytes.length <= OFFSET_LIMIT && lengths.every((count) => count <= LENGTH_MAX)) {
      this.reserve(bytes.length);
      this.bytes.set(bytes, this.used);
      let at = this.used;
      for (let index = 0; index < lengths.length; index++) {
        this.start[first + index] = at;
        this.length[first + index] = lengths[index]!;
        at += lengths[index]!;
      }
      this.used = at;
      return;
    }
    // Stryker disable next-line ConditionalExpression,StringLiteral: bytes reach here only past the 4 GiB bound or with a string over 65,533 long, which no snapshot writes
    const text = typeof joined === 'string' ? joined : Buffer.from(joined.buffer, joined.byteOffset, joined.byteLength).toString('latin1');
    let at = 0;
    // Stryker disable next-line EqualityOperator: one row more gets an empty string in a row past the loaded ones, which its own job overwrites
    for (let index = 0; index < lengths.length; index++) this.set(first + index, text.slice(at, (at += lengths[index]!)));
  }

  /** Makes room for `count` more bytes of strings at once (a restart that knows how many it will load). */
  reserveBytes(count: number): void {
    this.reserve(count);
  }

  /** Bytes of the strings held (freed ones not counted, nor those kept whole): what a restart reserves. */
  get liveBytes(): number {
    return this.used - this.freed;
  }

  /** Empties a row. */
  clear(row: number): void {
    const count = this.length[row]!;
    if (count === NO_STRING) return;
    this.length[row] = NO_STRING;
    if (count === WIDE) {
      this.wide.delete(row);
      return;
    }
    this.freed += count;
    // Stryker disable next-line EqualityOperator: a compaction one byte sooner or later keeps the same strings
    if (this.freed >= COMPACT_MIN_BYTES && this.freed * 2 >= this.used) this.compact();
  }

  /** The row's string; the row must hold one. */
  get(row: number): string {
    const count = this.length[row]!;
    if (count === WIDE) return this.wide.get(row)!;
    const from = this.start[row]!;
    return this.text(from, from + count);
  }

  /** Negative, zero or positive as the row's string sorts before, with or after `value`. */
  compareTo(row: number, value: string): number {
    const count = this.length[row]!;
    if (count === WIDE) return compareStrings(this.wide.get(row)!, value);
    const bytes = this.bytes;
    const from = this.start[row]!;
    const shorter = Math.min(count, value.length);
    for (let at = 0; at < shorter; at++) {
      const difference = bytes[from + at]! - value.charCodeAt(at);
      if (difference !== 0) return difference;
    }
    return count - value.length;
  }

  /** Whether the row's string is `value`. */
  equals(row: number, value: string): boolean {
    const count = this.length[row]!;
    if (count === WIDE) return this.wide.get(row) === value;
    // Stryker disable next-line ConditionalExpression: a fast path; compareTo tells strings of other lengths apart too
    return count === value.length && this.compareTo(row, value) === 0;
  }

  /** Negative, zero or positive as row a's string sorts before, with or after row b's. */
  compareRows(a: number, b: number): number {
    const aCount = this.length[a]!;
    const bCount = this.length[b]!;
    // Stryker disable next-line ConditionalExpression: comparing the strings themselves gives the same order, only slower
    if (aCount === WIDE || bCount === WIDE) return compareStrings(this.get(a), this.get(b));
    const bytes = this.bytes;
    const aFrom = this.start[a]!;
    const bFrom = this.start[b]!;
    const shorter = Math.min(aCount, bCount);
    for (let at = 0; at < shorter; at++) {
      const difference = bytes[aFrom + at]! - bytes[bFrom + at]!;
      if (difference !== 0) return difference;
    }
    return aCount - bCount;
  }

  /** FNV-1a over the row's string's code units, from `start` (the hash of a key table, see jobs-by-key.ts). */
  hashFrom(row: number, start: number): number {
    const count = this.length[row]!;
    let hash = start;
    if (count === WIDE) {
      const text = this.wide.get(row)!;
      for (let at = 0; at < text.length; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
      return hash >>> 0;
    }
    const bytes = this.bytes;
    const from = this.start[row]!;
    for (let at = from; at < from + count; at++) hash = Math.imul(hash ^ bytes[at]!, 0x01000193);
    return hash >>> 0;
  }

  /** The string's length in characters. */
  lengthOf(row: number): number {
    const count = this.length[row]!;
    return count === WIDE ? this.wide.get(row)!.length : count;
  }

  /** Bytes the column holds: its buffer, the per-row offsets and lengths (the wide strings are not counted). */
  get footprintBytes(): number {
    return this.bytes.byteLength + this.start.byteLength + this.length.byteLength;
  }

  /** Strings kept whole in the map (for tests of which strings fit the buffer). */
  get wideStrings(): number {
    return this.wide.size;
  }

  /** Bytes of freed strings not yet reclaimed (for tests of the compaction bound). */
  get freedBytes(): number {
    return this.freed;
  }

  private text(from: number, to: number): string {
    return this.view.toString('latin1', from, to);
  }

  private replaceBytes(bytes: Uint8Array<ArrayBuffer>): void {
    this.bytes = bytes;
    this.view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Writes `value` at `used` when every character fits a byte; false (nothing kept) otherwise. */
  private write(value: string, count: number): boolean {
    this.reserve(count);
    const bytes = this.bytes;
    const from = this.used;
    // Stryker disable next-line EqualityOperator: one byte more lands in room reserved or not yet used, which the next string overwrites
    for (let at = 0; at < count; at++) {
      const code = value.charCodeAt(at);
      if (code > 0xff) return false;
      bytes[from + at] = code;
    }
    return true;
  }

  /** Room for `count` more bytes after `used`: the buffer grows by half, so copying costs little per byte. */
  private reserve(count: number): void {
    const needed = this.used + count;
    // Stryker disable next-line EqualityOperator: growing when not needed only copies once more
    if (needed <= this.bytes.length) return;
    // Stryker disable next-line MethodExpression,ArithmeticOperator: sizing only; the buffer holds what is needed either way
    const size = Math.min(OFFSET_LIMIT, Math.max(SMALLEST_BUFFER, needed, Math.ceil(this.bytes.length * 1.5)));
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.used));
    this.replaceBytes(grown);
  }

  /** Copies the live strings into a buffer of their size, in row order. */
  private compact(): void {
    const live = this.used - this.freed;
    const from = this.bytes;
    const to = new Uint8Array(Math.max(SMALLEST_BUFFER, Math.ceil(live * 1.5)));
    let at = 0;
    for (let row = 0; row < this.length.length; row++) {
      const count = this.length[row]!;
      if (count === NO_STRING || count === WIDE) continue;
      const start = this.start[row]!;
      to.set(from.subarray(start, start + count), at);
      this.start[row] = at;
      at += count;
    }
    this.replaceBytes(to);
    this.used = at;
    this.freed = 0;
  }
}

const WIDE_CHARACTER = /[^\u0000-\u00ff]/;

/** `text` as Latin-1 bytes, one per character; null when a character does not fit a byte. */
export function latin1Bytes(text: string): Uint8Array | null {
  if (WIDE_CHARACTER.test(text)) return null;
  const bytes = new Uint8Array(text.length);
  Buffer.from(bytes.buffer).write(text, 0, 'latin1');
  return bytes;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
