/**
 * One JSON text per row at most (a job's arguments, result, log, extensions...), as UTF-8
 * bytes in segments of one buffer each: no JavaScript string or object per job. A million
 * 200-byte argument texts are 200 MB of bytes, not a million strings for the collector to
 * visit, and a search for a piece of text is one native scan per segment.
 *
 * Each text is preceded by a header of five bytes: a 0 byte, then its row in four digits
 * of base 255 (each 1..255, never 0). A JSON text never holds a 0 byte (`JSON.stringify`
 * escapes U+0000, and UTF-8 writes no 0 byte for any other character), so every 0 byte of
 * a segment starts a header: a text ends where the next header starts (or at the end of
 * what the segment holds), and a match found anywhere names its row by the header before
 * it. A row costs 4 bytes (where its header is: the segment and the offset in it) and each
 * text 5 bytes beyond its own.
 *
 * Segments of 8 MiB, not one buffer that grows: growing copies everything held each time
 * and, until the copy is done, holds it twice (a resident set that counted both), and its
 * spare room is unused memory; a segment is filled, then the next is made (a text is at
 * most a segment: the caps on what a job keeps are far below it). Freed texts stay in place
 * until their segment is half freed (and, for the segment being filled, 64 KiB); then the
 * segment's live texts move to the newest segment and it is dropped, so a compaction copies
 * at most half a segment.
 */
import { assert } from '../domain-error.ts';
import type { SparseRows } from './sparse-rows.ts';

const NONE = 0xffffffff;
export const TEXT_HEADER_BYTES = 5;
const DIGIT_BASE = 255;
/** Rows a header can name: four digits of base 255. */
export const TEXT_COLUMN_ROWS_MAX = DIGIT_BASE ** 4;
const OFFSET_BITS = 23;
/** Bytes of a segment, and the most a text with its header may take. */
export const TEXT_SEGMENT_BYTES = 2 ** OFFSET_BITS;
/** Segments a column may hold at once: with 8 MiB each, 4 GiB. */
const SEGMENTS_MAX = 2 ** (32 - OFFSET_BITS) - 1;
/** The segment new texts go to is compacted only past this many freed bytes: a small one is not worth copying. */
const COMPACT_MIN_BYTES = 64 * 1024;
/** A first segment this small, grown to a whole one: a column of a few texts stays small. */
const FIRST_SEGMENT_BYTES = 4096;

/** One buffer of texts: `bytes[0 .. used)` hold texts with their headers, `freed` of them freed. */
interface Segment {
  bytes: Buffer;
  used: number;
  freed: number;
}

const locationOf = (segment: number, offset: number): number => segment * TEXT_SEGMENT_BYTES + offset;
const segmentOf = (location: number): number => Math.floor(location / TEXT_SEGMENT_BYTES);
const offsetOf = (location: number): number => location % TEXT_SEGMENT_BYTES;

export class TextColumn {
  /** by index; null: a dropped segment's index, free for a new one */
  private segments: Array<Segment | null> = [];
  /** the segment new texts go to */
  private current = -1;
  /** rows holding a text */
  private texts = 0;
  /** where each row's header is (locationOf), NONE for a row without text; by slot when `sparse` is given */
  private start = new Uint32Array(0);

  /** `sparse`: the slots of rows that hold a rare field (sparse-rows.ts), shared with the other columns of such fields; without it, by row */
  constructor(private readonly sparse: SparseRows | null = null) {}

  /** Makes rows [0, rows) usable; new rows hold no text. */
  ensureRows(rows: number): void {
    assert(rows <= TEXT_COLUMN_ROWS_MAX, `a text column holds at most ${TEXT_COLUMN_ROWS_MAX} rows`);
    if (this.sparse !== null) this.sparse.ensureRows(rows);
    else this.ensureStarts(rows);
  }

  private ensureStarts(count: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: growing when not needed only copies the per-row array once more
    if (count <= this.start.length) return;
    const start = new Uint32Array(this.sparse === null ? count : Math.max(64, count, this.start.length * 2)).fill(NONE);
    start.set(this.start);
    this.start = start;
  }

  /** Where the row's header is, NONE without a text. */
  private locationOfRow(row: number): number {
    const index = this.sparse === null ? row : this.sparse.slotOf(row);
    return index < 0 || index >= this.start.length ? NONE : this.start[index]!;
  }

  /** Sets where the row's header is (a row that has none gets a slot first; NONE gives it back). */
  private placeRow(row: number, location: number): void {
    if (this.sparse === null) {
      this.start[row] = location;
      return;
    }
    if (location === NONE) {
      this.start[this.sparse.slotOf(row)] = NONE;
      this.sparse.letGo(row);
      return;
    }
    const had = this.locationOfRow(row) !== NONE;
    const slot = had ? this.sparse.slotOf(row) : this.sparse.take(row);
    this.ensureStarts(slot + 1);
    this.start[slot] = location;
  }

  has(row: number): boolean {
    return this.locationOfRow(row) !== NONE;
  }

  /** Whether the column holds a text per row (false: by slot of the rows that hold a rare field). */
  get dense(): boolean {
    return this.sparse === null;
  }

  /** The slot's location, for the checks of the shared slots (sparse columns only). */
  holdsSlot(slot: number): boolean {
    return slot < this.start.length && this.start[slot] !== NONE;
  }

  /** Puts `text` (JSON: never a 0 byte) into a row that holds none. */
  set(row: number, text: string): void {
    assert(!this.has(row), `row ${row} of a text column already holds a text: clear it first`);
    assert(!text.includes('\u0000'), 'a text column holds JSON texts, which never contain U+0000 unescaped');
    const length = Buffer.byteLength(text, 'utf8');
    const { segment, at } = this.claim(row, length);
    segment.bytes.write(text, at + TEXT_HEADER_BYTES, length, 'utf8');
  }

  /** Puts `bytes[from, to)` (UTF-8 of a JSON text, checked by the caller to hold no 0 byte) into a row that holds none. */
  setBytes(row: number, bytes: Uint8Array, from: number, to: number): void {
    assert(!this.has(row), `row ${row} of a text column already holds a text: clear it first`);
    const { segment, at } = this.claim(row, to - from);
    segment.bytes.set(bytes.subarray(from, to), at + TEXT_HEADER_BYTES);
  }

  /** Empties a row (nothing when it holds no text). */
  clear(row: number): void {
    const location = this.locationOfRow(row);
    if (location === NONE) return;
    this.placeRow(row, NONE);
    this.texts--;
    const index = segmentOf(location);
    const segment = this.segments[index]!;
    const at = offsetOf(location);
    segment.freed += endOf(segment, at) - at;
    // Stryker disable next-line EqualityOperator: a compaction one byte sooner or later keeps the same texts
    if (segment.freed * 2 < segment.used || (index === this.current && segment.freed < COMPACT_MIN_BYTES)) return;
    if (index === this.current) this.current = -1; // its texts move to a new segment
    this.compact(index);
  }

  /** The row's text; the row must hold one. */
  get(row: number): string {
    const { segment, at } = this.located(row);
    return segment.bytes.toString('utf8', at + TEXT_HEADER_BYTES, endOf(segment, at));
  }

  /** The row's text, or null. */
  getOrNull(row: number): string | null {
    return this.has(row) ? this.get(row) : null;
  }

  /** Bytes of the row's text (UTF-8), 0 without one. */
  byteLength(row: number): number {
    if (!this.has(row)) return 0;
    const { segment, at } = this.located(row);
    return endOf(segment, at) - at - TEXT_HEADER_BYTES;
  }

  /** The row's text's bytes as a view into the column, valid until the column next changes. */
  view(row: number): Uint8Array {
    const { segment, at } = this.located(row);
    return segment.bytes.subarray(at + TEXT_HEADER_BYTES, endOf(segment, at));
  }

  /** Bytes the live texts take, headers included: what a restart reserves (`reserveBytes`). */
  get heldBytes(): number {
    let held = 0;
    for (const segment of this.segments) if (segment !== null) held += segment.used - segment.freed;
    return held;
  }

  /** Bytes of the texts held, headers not counted. */
  get liveBytes(): number {
    return this.heldBytes - this.texts * TEXT_HEADER_BYTES;
  }

  /** A restart that knows how much it will load makes its first segment whole at once (the rest come as they fill). */
  // Stryker disable next-line BlockStatement,ConditionalExpression: sizing only; segments are made as texts come either way
  reserveBytes(count: number): void {
    if (count > FIRST_SEGMENT_BYTES && this.current >= 0) this.room(this.segments[this.current]!, Math.min(count, TEXT_SEGMENT_BYTES));
  }

  /** Bytes the column holds: its segments' buffers and the per-row offsets. */
  get footprintBytes(): number {
    let bytes = this.start.byteLength;
    for (const segment of this.segments) if (segment !== null) bytes += segment.bytes.byteLength;
    return bytes;
  }

  /** Bytes of freed texts not yet reclaimed (for tests of the compaction bound). */
  get freedBytes(): number {
    let freed = 0;
    for (const segment of this.segments) if (segment !== null) freed += segment.freed;
    return freed;
  }

  /** Rows holding a text. */
  get size(): number {
    return this.texts;
  }

  /**
   * Calls `visit` once for each row whose text contains `needle` (UTF-8, no 0 byte), with one
   * native scan per segment; `visit` is given the match (`byteAt` reads around it, by its
   * `at`) and may refuse it by returning false: the rest of the row's text is then searched
   * on. Between segments it asks `stop`; returns false when it stopped before the end (the
   * rows visited are then those of the segments searched).
   */
  findRows(needle: Uint8Array, visit: (row: number, at: number) => boolean | void, stop: () => boolean = () => false): boolean {
    assert(needle.length > 0 && needle.indexOf(0) < 0, 'a text column is searched for a non-empty needle without a 0 byte');
    const wanted = Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength);
    let searched = 0;
    for (let index = 0; index < this.segments.length; index++) {
      const segment = this.segments[index];
      if (segment === null || segment === undefined || segment.used === segment.freed) continue;
      if (searched++ > 0 && stop()) return false;
      const bytes = segment.bytes.subarray(0, segment.used);
      let from = 0;
      for (;;) {
        const found = bytes.indexOf(wanted, from);
        if (found < 0) break;
        const header = bytes.lastIndexOf(0, found);
        const textStart = header + TEXT_HEADER_BYTES;
        if (found < textStart) {
          from = textStart; // it began in the header's digits: the text itself may still hold one
          continue;
        }
        const row = rowOfHeader(bytes, header);
        if (this.locationOfRow(row) === locationOf(index, header) && visit(row, locationOf(index, found)) === false) {
          from = found + 1; // refused: a later match in the same text may still do
          continue;
        }
        from = endOf(segment, header); // the next text: this row is decided
      }
    }
    return true;
  }

  /** The byte at a location (a match's surroundings, for `findRows`'s visitor, in its segment); 0 outside what the segment holds. */
  byteAt(location: number): number {
    const segment = location < 0 ? undefined : this.segments[segmentOf(location)];
    const at = offsetOf(location);
    return segment === null || segment === undefined || at >= segment.used ? 0 : segment.bytes[at]!;
  }

  /** Checks what the column states of itself; throws naming the first thing found wrong. */
  checkInvariants(): void {
    let live = 0;
    this.segments.forEach((segment, index) => {
      if (segment === null) return;
      let liveBytes = 0;
      let at = 0;
      while (at < segment.used) {
        assert(segment.bytes[at] === 0, `a text column's header expected at ${at} of segment ${index}`);
        const end = endOf(segment, at);
        const row = rowOfHeader(segment.bytes, at);
        if (this.locationOfRow(row) === locationOf(index, at)) {
          live++;
          liveBytes += end - at;
        }
        at = end;
      }
      assert(liveBytes === segment.used - segment.freed, `segment ${index} of a text column counts ${segment.used - segment.freed} live bytes, it holds ${liveBytes}`);
      assert(segment.bytes.subarray(segment.used).every((byte) => byte === 0), `segment ${index} of a text column has bytes past its end`);
    });
    let rowsWithText = 0;
    for (let index = 0; index < this.start.length; index++) if (this.start[index] !== NONE) rowsWithText++;
    assert(live === rowsWithText && live === this.texts, `a text column has ${rowsWithText} rows with a text and counts ${this.texts}, but ${live} live texts in its segments`);
  }

  private located(row: number): { segment: Segment; at: number } {
    const location = this.locationOfRow(row);
    assert(location !== NONE, `row ${row} of a text column holds no text`);
    return { segment: this.segments[segmentOf(location)]!, at: offsetOf(location) };
  }

  /** Writes the row's header where a text of `length` bytes fits after it; returns where. */
  private claim(row: number, length: number): { segment: Segment; at: number } {
    const size = TEXT_HEADER_BYTES + length;
    assert(size <= TEXT_SEGMENT_BYTES, `a text of ${length} bytes is past the ${TEXT_SEGMENT_BYTES - TEXT_HEADER_BYTES} a text column holds`);
    const { index, segment } = this.segmentFor(size);
    const at = segment.used;
    writeHeader(segment.bytes, at, row);
    segment.used += size;
    this.placeRow(row, locationOf(index, at));
    this.texts++;
    return { segment, at };
  }

  /** The segment a text of `size` bytes (header included) goes to: the current one while it has room, else a new one. */
  private segmentFor(size: number): { index: number; segment: Segment } {
    const current = this.current < 0 ? null : this.segments[this.current]!;
    if (current !== null && current.used + size <= TEXT_SEGMENT_BYTES) {
      this.room(current, current.used + size);
      return { index: this.current, segment: current };
    }
    return this.newSegment(current === null ? Math.max(FIRST_SEGMENT_BYTES, size) : TEXT_SEGMENT_BYTES);
  }

  private newSegment(bytes: number): { index: number; segment: Segment } {
    let index = this.segments.indexOf(null);
    if (index < 0) {
      index = this.segments.length;
      assert(index < SEGMENTS_MAX, `a text column holds at most ${SEGMENTS_MAX} segments of ${TEXT_SEGMENT_BYTES} bytes`);
      this.segments.push(null);
    }
    const segment: Segment = { bytes: Buffer.alloc(bytes), used: 0, freed: 0 };
    this.segments[index] = segment;
    this.current = index;
    return { index, segment };
  }

  /** Grows a segment smaller than a whole one (only the first is) to hold `needed` bytes. */
  private room(segment: Segment, needed: number): void {
    if (needed <= segment.bytes.length) return;
    // Stryker disable next-line ArithmeticOperator,MethodExpression: sizing only; the segment holds what is needed either way
    const grown = Buffer.alloc(Math.min(TEXT_SEGMENT_BYTES, Math.max(needed, segment.bytes.length * 2)));
    segment.bytes.copy(grown, 0, 0, segment.used);
    segment.bytes = grown;
  }

  /** Moves a half-freed segment's live texts to the current segment and drops it (its index is free only once they moved, so no moved text takes it). */
  private compact(index: number): void {
    const segment = this.segments[index]!;
    let at = 0;
    while (at < segment.used) {
      const end = endOf(segment, at);
      const row = rowOfHeader(segment.bytes, at);
      if (this.locationOfRow(row) === locationOf(index, at)) {
        this.texts--; // counted again by claim, which moves the row's location (its slot stays)
        const moved = this.claim(row, end - at - TEXT_HEADER_BYTES);
        segment.bytes.copy(moved.segment.bytes, moved.at + TEXT_HEADER_BYTES, at + TEXT_HEADER_BYTES, end);
      }
      at = end;
    }
    this.segments[index] = null;
  }
}

/** Where the text whose header is at `header` ends: the next header, or the end of what the segment holds. */
function endOf(segment: Segment, header: number): number {
  const next = segment.bytes.indexOf(0, header + TEXT_HEADER_BYTES);
  return next < 0 || next > segment.used ? segment.used : next;
}

function writeHeader(bytes: Uint8Array, at: number, row: number): void {
  bytes[at] = 0;
  let rest = row;
  for (let digit = 4; digit >= 1; digit--) {
    bytes[at + digit] = (rest % DIGIT_BASE) + 1;
    rest = Math.floor(rest / DIGIT_BASE);
  }
}

function rowOfHeader(bytes: Uint8Array, at: number): number {
  let row = 0;
  for (let digit = 1; digit <= 4; digit++) row = row * DIGIT_BASE + (bytes[at + digit]! - 1);
  return row;
}
