/**
 * Every job's state history in one append-only `Float64Array` (entries packed as in
 * job-history.ts), each row owning a slot of it: where it starts, how many entries it
 * holds, and its capacity. An entry goes into its row's slot; a full slot moves to the end
 * of the column with twice the room, and the slot it left is garbage until the column
 * next grows, which copies the rows' slots alone into the new column (sized for them
 * alone when garbage was over half). A freed row keeps its slot for the job that reuses
 * the row.
 *
 * Measured (heap after a full collection, 200k rows of three or four entries): 51 bytes a
 * row here (entries, the room left in slots and columns, start, length and capacity),
 * 92 with a `Float64Array` of its own per row, 76 with a plain array per row.
 */
import { assert } from '../domain-error.ts';
import { currentRunStartMs, entryAtMs, HISTORY_ENTRIES_MAX, packHistoryEntry } from './job-history.ts';

const FIRST_SLOT_ENTRIES = 4;
const FIRST_COLUMN_ENTRIES = 1024;

export class HistoryColumn {
  private entries = new Float64Array(FIRST_COLUMN_ENTRIES);
  /** entries in use or garbage: a new slot starts here */
  private end = 0;
  private garbage = 0;
  private starts = new Uint32Array(0);
  private lengths = new Uint16Array(0);
  private capacities = new Uint16Array(0);
  private rows = 0;

  /** Rows 0 to `rows` - 1 have a slot (empty until a first entry). */
  ensureRows(rows: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: only how soon and how much the per-row arrays grow; every row below `rows` has room either way
    if (rows > this.starts.length) {
      // Stryker disable next-line ArithmeticOperator: the size only sets when they grow next
      const capacity = Math.max(rows, this.starts.length * 2, 16);
      this.starts = grown(this.starts, new Uint32Array(capacity));
      this.lengths = grown(this.lengths, new Uint16Array(capacity));
      this.capacities = grown(this.capacities, new Uint16Array(capacity));
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: one row more or fewer made empty here is made empty again when it is added (an empty slot is start, length 0, capacity 0)
    for (let row = this.rows; row < rows; row++) {
      this.starts[row] = this.end;
      this.lengths[row] = 0;
      this.capacities[row] = 0;
    }
    this.rows = Math.max(this.rows, rows);
  }

  /** Empties a row's history (a freed row's slot is kept for its next job). */
  clear(row: number): void {
    this.lengths[row] = 0;
  }

  length(row: number): number {
    return this.lengths[row]!;
  }

  /** The row's entries, oldest first, as an array of their own. */
  copy(row: number): number[] {
    const start = this.starts[row]!;
    const entries = new Array<number>(this.lengths[row]!);
    for (let i = 0; i < entries.length; i++) entries[i] = this.entries[start + i]!;
    return entries;
  }

  /** The row's entries, oldest first, as a view valid until the next change to the column. */
  view(row: number): Float64Array {
    const start = this.starts[row]!;
    return this.entries.subarray(start, start + this.lengths[row]!);
  }

  /** When the row's current state began: the earliest entry of the trailing run of its state; null without entries. */
  currentRunStartMs(row: number): number | null {
    const start = this.starts[row]!;
    return currentRunStartMs(this.entries, start, start + this.lengths[row]!);
  }

  /** The row's newest entry; the row must have one. */
  last(row: number): number {
    assert(this.lengths[row]! > 0, `row ${row} has no history to read the last entry of`);
    return this.entries[this.starts[row]! + this.lengths[row]! - 1]!;
  }

  /** Inserts after entries with an equal time, so among ties the later arrival is last; the oldest goes past HISTORY_ENTRIES_MAX. */
  insert(row: number, atMs: number, code: number): void {
    const entry = packHistoryEntry(atMs, code);
    let length = this.lengths[row]!;
    // Stryker disable next-line ConditionalExpression: moving a slot that still has room only wastes it
    if (length === this.capacities[row]) this.move(row, Math.max(FIRST_SLOT_ENTRIES, length * 2));
    const start = this.starts[row]!;
    const entries = this.entries;
    let index = length;
    while (index > 0 && entryAtMs(entries[start + index - 1]!) > entryAtMs(entry)) index--;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a fast path; copying an empty range changes nothing
    if (index < length) entries.copyWithin(start + index + 1, start + index, start + length);
    entries[start + index] = entry;
    length++;
    if (length > HISTORY_ENTRIES_MAX) {
      entries.copyWithin(start, start + 1, start + length);
      length--;
    }
    this.lengths[row] = length;
  }

  /**
   * Removes the newest entry equal to (`atMs`, `code`); false when the row has none (the
   * bound dropped it) or it is the row's only entry (a job always keeps one).
   */
  remove(row: number, atMs: number, code: number): boolean {
    const entry = packHistoryEntry(atMs, code);
    const start = this.starts[row]!;
    const length = this.lengths[row]!;
    if (length < 2) return false;
    for (let index = length - 1; index >= 0; index--) {
      if (this.entries[start + index] !== entry) continue;
      this.entries.copyWithin(start + index, start + index + 1, start + length);
      this.lengths[row] = length - 1;
      return true;
    }
    return false;
  }

  /**
   * Appends rows `first`.. with `lengths[i]` entries each, taken in order from `packed` (a
   * snapshot's column: its entries, or their bytes).
   */
  load(first: number, lengths: ArrayLike<number>, packed: Float64Array | Uint8Array): void {
    this.ensureRows(first + lengths.length);
    if (packed instanceof Float64Array) {
      this.reserve(packed.length);
      this.entries.set(packed, this.end);
    } else {
      // Stryker disable next-line ArithmeticOperator: more room than the entries need is only more room
      this.reserve(packed.byteLength / 8);
      new Uint8Array(this.entries.buffer, this.entries.byteOffset + this.end * 8, packed.byteLength).set(packed);
    }
    let at = this.end;
    for (let i = 0; i < lengths.length; i++) {
      const row = first + i;
      const length = lengths[i]!;
      if (length > HISTORY_ENTRIES_MAX) throw new Error(`a job's history of ${length} entries is over the ${HISTORY_ENTRIES_MAX} kept`);
      // Stryker disable next-line AssignmentOperator: garbage only sizes the next column (a slot's garbage never exceeds the live slots: each move at least doubles a slot)
      this.garbage += this.capacities[row]!;
      this.starts[row] = at;
      this.lengths[row] = length;
      this.capacities[row] = length;
      at += length;
    }
    this.end = at;
  }

  /** Entries in live slots, the room left in them included: at least what a restart loads back. */
  get liveEntries(): number {
    // Stryker disable next-line ArithmeticOperator: a restart's sizing hint; more room only grows the column sooner
    return this.end - this.garbage;
  }

  /** Room for `rows` rows and `entries` more entries at once (a restart that knows how much it will load). */
  // Stryker disable next-line BlockStatement: sizing only; the per-row arrays and the column grow when rows come either way
  makeRoom(rows: number, entries: number): void {
    this.reserve(entries);
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: sizing only, as above
    if (rows > this.starts.length) {
      this.starts = grown(this.starts, new Uint32Array(rows));
      this.lengths = grown(this.lengths, new Uint16Array(rows));
      this.capacities = grown(this.capacities, new Uint16Array(rows));
    }
  }

  /** Entries the column holds room for (live slots, garbage and spare room): for tests of compaction. */
  get allocatedEntries(): number {
    return this.entries.length;
  }

  /** Gives the row a new slot of `capacity` at the end, keeping its entries. */
  private move(row: number, capacity: number): void {
    this.reserve(capacity);
    const start = this.starts[row]!;
    this.entries.copyWithin(this.end, start, start + this.lengths[row]!);
    // Stryker disable next-line AssignmentOperator: garbage only sizes the next column and picks the copy (either copy keeps every slot)
    this.garbage += this.capacities[row]!;
    this.starts[row] = this.end;
    this.capacities[row] = capacity;
    this.end += capacity;
  }

  /**
   * Room for `count` entries at the end: a new column twice the size needed, into which the
   * slots are copied as they lie (no garbage) or one after another (garbage dropped; the
   * column is sized for the slots alone when garbage was over half of it).
   */
  private reserve(count: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: growing when not needed only copies the slots once more
    if (this.end + count <= this.entries.length) return;
    const old = this.entries;
    // Stryker disable next-line ArithmeticOperator: sizing only; the new column holds the slots either way (at least twice what they need)
    const live = this.end - this.garbage;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: sizing only, as above
    const entries = new Float64Array(Math.max(FIRST_COLUMN_ENTRIES, this.garbage * 2 > this.end ? (live + count) * 2 : (old.length + count) * 2));
    this.entries = entries;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: the fast path; the slot-by-slot copy below keeps the same entries
    if (this.garbage === 0) {
      entries.set(old.subarray(0, this.end));
      return;
    }
    let at = 0;
    for (let row = 0; row < this.rows; row++) {
      const start = this.starts[row]!;
      const length = this.lengths[row]!;
      for (let i = 0; i < length; i++) entries[at + i] = old[start + i]!;
      this.starts[row] = at;
      at += this.capacities[row]!;
    }
    this.end = at;
    this.garbage = 0;
  }
}

function grown<A extends Uint32Array | Uint16Array>(from: A, to: A): A {
  to.set(from);
  return to;
}
