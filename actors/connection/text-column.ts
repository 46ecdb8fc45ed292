/**
 * One JSON text per row at most (a job's arguments, result, log, extensions...), as UTF-8
 * bytes in one shared buffer: no JavaScript string or object per job. A million 200-byte
 * argument texts are 200 MB of bytes, not a million strings for the collector to visit,
 * and a search for a piece of text is one native scan of the buffer.
 *
 * Each text is preceded by a header of five bytes: a 0 byte, then its row in four digits
 * of base 255 (each 1..255, never 0). A JSON text never holds a 0 byte (`JSON.stringify`
 * escapes U+0000, and UTF-8 writes no 0 byte for any other character), so every 0 byte of
 * the buffer starts a header: a text ends where the next header starts (or at `used`), and
 * a match found anywhere in the buffer names its row by the header before it. A row costs
 * 4 bytes (where its header is) and each text 5 bytes beyond its own.
 *
 * Freed texts stay in place, header and all, until they are half the buffer; then the live
 * ones are copied, in buffer order, into a buffer of their size (compaction). The buffer
 * past `used` is always zeros: new room comes from fresh, zeroed memory.
 */
import { assert } from '../domain-error.ts';

const NONE = 0xffffffff;
export const TEXT_HEADER_BYTES = 5;
const DIGIT_BASE = 255;
/** Rows a header can name: four digits of base 255. */
export const TEXT_COLUMN_ROWS_MAX = DIGIT_BASE ** 4;
const OFFSET_LIMIT = 2 ** 32 - 1;
const SMALLEST_BUFFER = 1024;
/** Freed bytes below this never trigger a compaction: a small column is not worth copying. */
const COMPACT_MIN_BYTES = 64 * 1024;
/** A search looks at this much of the buffer between checks of its budget. */
const SEARCH_WINDOW_BYTES = 4 * 1024 * 1024;

export class TextColumn {
  private bytes: Buffer = Buffer.alloc(0);
  /** bytes[0 .. used) hold texts with their headers, some of them freed */
  private used = 0;
  /** bytes of freed texts (headers included) inside [0, used) */
  private freed = 0;
  /** rows holding a text */
  private texts = 0;
  /** where each row's header is, NONE for a row without text */
  private start = new Uint32Array(0);

  /** Makes rows [0, rows) usable; new rows hold no text. */
  ensureRows(rows: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: growing when not needed only copies the per-row array once more
    if (rows <= this.start.length) return;
    assert(rows <= TEXT_COLUMN_ROWS_MAX, `a text column holds at most ${TEXT_COLUMN_ROWS_MAX} rows`);
    const start = new Uint32Array(rows).fill(NONE);
    start.set(this.start);
    this.start = start;
  }

  has(row: number): boolean {
    return row < this.start.length && this.start[row] !== NONE;
  }

  /** Puts `text` (JSON: never a 0 byte) into a row that holds none. */
  set(row: number, text: string): void {
    assert(!this.has(row), `row ${row} of a text column already holds a text: clear it first`);
    assert(!text.includes('\u0000'), 'a text column holds JSON texts, which never contain U+0000 unescaped');
    const length = Buffer.byteLength(text, 'utf8');
    const at = this.claim(row, length);
    this.bytes.write(text, at + TEXT_HEADER_BYTES, length, 'utf8');
  }

  /** Puts `bytes[from, to)` (UTF-8 of a JSON text, checked by the caller to hold no 0 byte) into a row that holds none. */
  setBytes(row: number, bytes: Uint8Array, from: number, to: number): void {
    assert(!this.has(row), `row ${row} of a text column already holds a text: clear it first`);
    const at = this.claim(row, to - from);
    this.bytes.set(bytes.subarray(from, to), at + TEXT_HEADER_BYTES);
  }

  /** Empties a row (nothing when it holds no text). */
  clear(row: number): void {
    const at = this.start[row]!;
    if (at === NONE) return;
    this.start[row] = NONE;
    this.texts--;
    this.freed += this.endOf(at) - at;
    // Stryker disable next-line EqualityOperator: a compaction one byte sooner or later keeps the same texts
    if (this.freed >= COMPACT_MIN_BYTES && this.freed * 2 >= this.used) this.compact();
  }

  /** The row's text; the row must hold one. */
  get(row: number): string {
    const at = this.start[row]!;
    assert(at !== NONE, `row ${row} of a text column holds no text`);
    return this.bytes.toString('utf8', at + TEXT_HEADER_BYTES, this.endOf(at));
  }

  /** The row's text, or null. */
  getOrNull(row: number): string | null {
    return this.has(row) ? this.get(row) : null;
  }

  /** Bytes of the row's text (UTF-8), 0 without one. */
  byteLength(row: number): number {
    const at = row < this.start.length ? this.start[row]! : NONE;
    return at === NONE ? 0 : this.endOf(at) - at - TEXT_HEADER_BYTES;
  }

  /** The row's text's bytes as a view into the column, valid until the column next changes. */
  view(row: number): Uint8Array {
    const at = this.start[row]!;
    assert(at !== NONE, `row ${row} of a text column holds no text`);
    return this.bytes.subarray(at + TEXT_HEADER_BYTES, this.endOf(at));
  }

  /** Bytes of the texts held, headers not counted: what a restart reserves and a snapshot writes. */
  get liveBytes(): number {
    return this.used - this.freed - this.texts * TEXT_HEADER_BYTES;
  }

  /** Bytes the live texts take in the buffer, headers included: what a restart reserves (`reserveBytes`). */
  get heldBytes(): number {
    return this.used - this.freed;
  }

  /** Room for `count` more bytes (texts and headers) at once: a restart that knows what it will load. */
  reserveBytes(count: number): void {
    this.reserve(count);
  }

  /** Bytes the column holds: its buffer and the per-row offsets. */
  get footprintBytes(): number {
    return this.bytes.byteLength + this.start.byteLength;
  }

  /** Bytes of freed texts not yet reclaimed (for tests of the compaction bound). */
  get freedBytes(): number {
    return this.freed;
  }

  /**
   * Calls `visit` once for each row whose text contains `needle` (UTF-8, no 0 byte), in
   * buffer order, with one native scan of the buffer window by window; `visit` is given
   * where the match is (`byteAt` reads around it) and may refuse it by returning false, and
   * the rest of the row's text is then searched on. Between windows it asks `stop`; returns
   * false when it stopped before the end (the rows visited are then those of the part searched).
   */
  findRows(needle: Uint8Array, visit: (row: number, at: number) => boolean | void, stop: () => boolean = () => false): boolean {
    assert(needle.length > 0 && needle.indexOf(0) < 0, 'a text column is searched for a non-empty needle without a 0 byte');
    const bytes = this.bytes;
    const used = this.used;
    const wanted = Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength);
    /** where the next window begins */
    let pos = 0;
    /** the end of the last text decided: a match before it is in a text already visited */
    let decidedTo = 0;
    while (pos < used) {
      const windowEnd = Math.min(used, pos + SEARCH_WINDOW_BYTES);
      // the view reaches past the window by the needle's length less one: a match starting inside it is found whole
      const window = bytes.subarray(pos, Math.min(used, windowEnd + wanted.length - 1));
      let from = Math.max(0, decidedTo - pos);
      while (from < windowEnd - pos) {
        const found = window.indexOf(wanted, from);
        if (found < 0 || found >= windowEnd - pos) break;
        const at = pos + found;
        const header = bytes.lastIndexOf(0, at);
        const textStart = header + TEXT_HEADER_BYTES;
        if (at < textStart) {
          from = textStart - pos; // it began in the header's digits: the text itself may still hold one
          continue;
        }
        const row = rowOfHeader(bytes, header);
        if (this.start[row] === header && visit(row, at) === false) {
          from = found + 1; // refused: a later match in the same text may still do
          continue;
        }
        decidedTo = this.endOf(header);
        from = decidedTo - pos;
      }
      pos = Math.max(windowEnd, decidedTo);
      if (pos < used && stop()) return false;
    }
    return true;
  }

  /** Checks what the column states of itself; throws naming the first thing found wrong. */
  checkInvariants(): void {
    let live = 0;
    let liveBytes = 0;
    let at = 0;
    while (at < this.used) {
      assert(this.bytes[at] === 0, `a text column's header expected at ${at}`);
      const end = this.endOf(at);
      const row = rowOfHeader(this.bytes, at);
      if (row < this.start.length && this.start[row] === at) {
        live++;
        liveBytes += end - at;
      }
      at = end;
    }
    let rowsWithText = 0;
    for (let row = 0; row < this.start.length; row++) if (this.start[row] !== NONE) rowsWithText++;
    assert(live === rowsWithText && live === this.texts, `a text column has ${rowsWithText} rows with a text and counts ${this.texts}, but ${live} live texts in its buffer`);
    assert(liveBytes === this.used - this.freed, `a text column counts ${this.used - this.freed} live bytes, its buffer holds ${liveBytes}`);
    assert(this.bytes.subarray(this.used).every((byte) => byte === 0), 'a text column has bytes past its end');
  }

  /** The byte at a buffer offset (a match's surroundings, for `findRows`'s visitor); 0 past the texts. */
  byteAt(offset: number): number {
    return offset >= 0 && offset < this.used ? this.bytes[offset]! : 0;
  }

  /** Rows holding a text. */
  get size(): number {
    return this.texts;
  }

  /** Writes the row's header at `used` with room for `length` bytes after it; returns where the header is. */
  private claim(row: number, length: number): number {
    const size = TEXT_HEADER_BYTES + length;
    assert(this.used + size <= OFFSET_LIMIT, 'a text column holds at most 4 GiB');
    this.reserve(size);
    const at = this.used;
    writeHeader(this.bytes, at, row);
    this.start[row] = at;
    this.texts++;
    this.used += size;
    return at;
  }

  /** Where the text whose header is at `header` ends: the next header, or the end of the texts. */
  private endOf(header: number): number {
    const next = this.bytes.indexOf(0, header + TEXT_HEADER_BYTES);
    return next < 0 || next > this.used ? this.used : next;
  }

  /** Room for `count` more bytes after `used`; the buffer grows by a quarter, so copying costs little per byte and little is left unused. */
  private reserve(count: number): void {
    const needed = this.used + count;
    // Stryker disable next-line EqualityOperator: growing when not needed only copies once more
    if (needed <= this.bytes.length) return;
    // Stryker disable next-line MethodExpression,ArithmeticOperator: sizing only; the buffer holds what is needed either way
    const size = Math.min(OFFSET_LIMIT, Math.max(SMALLEST_BUFFER, needed, Math.ceil(this.bytes.length * 1.25)));
    const grown = Buffer.alloc(size);
    this.bytes.copy(grown, 0, 0, this.used);
    this.bytes = grown;
  }

  /** Copies the live texts, headers and all, into a buffer of their size, in buffer order. */
  private compact(): void {
    const from = this.bytes;
    const to = Buffer.alloc(Math.max(SMALLEST_BUFFER, Math.ceil((this.used - this.freed) * 1.25)));
    let write = 0;
    let at = 0;
    while (at < this.used) {
      const end = this.endOf(at);
      const row = rowOfHeader(from, at);
      if (row < this.start.length && this.start[row] === at) {
        from.copy(to, write, at, end);
        this.start[row] = write;
        write += end - at;
      }
      at = end;
    }
    this.bytes = to;
    this.used = write;
    this.freed = 0;
  }
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
