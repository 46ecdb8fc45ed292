/**
 * A slot for the rows that hold something few rows have (a result, a log, a progress
 * object, earlier attempts): the text columns of those fields index their per-text offsets
 * by slot, not by row, so a row without any costs 4 bytes here instead of 4 in each column.
 * A slot is taken with a row's first such value and given back with its last.
 */
import { assert } from '../domain-error.ts';

const NO_SLOT = -1;

export class SparseRows {
  /** per row, its slot or NO_SLOT */
  private slots = new Int32Array(0);
  /** per slot, how many columns hold a value of its row */
  private holders = new Uint8Array(0);
  private slotsUsed = 0;
  private readonly freeSlots: number[] = [];

  /** Makes rows [0, rows) usable; new rows have no slot. */
  ensureRows(rows: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: growing when not needed only copies the per-row array once more
    if (rows <= this.slots.length) return;
    const slots = new Int32Array(rows).fill(NO_SLOT);
    slots.set(this.slots);
    this.slots = slots;
  }

  /** The row's slot; -1 when it has none. */
  slotOf(row: number): number {
    return row < this.slots.length ? this.slots[row]! : NO_SLOT;
  }

  /** Slots ever used, held or free: every slot is below it. */
  get slotSpan(): number {
    return this.slotsUsed;
  }

  /** One more column holds a value of the row: its slot, taken now if it had none. */
  take(row: number): number {
    let slot = this.slots[row]!;
    if (slot === NO_SLOT) {
      slot = this.freeSlots.pop() ?? this.slotsUsed++;
      if (slot >= this.holders.length) {
        const holders = new Uint8Array(Math.max(64, this.holders.length * 2));
        holders.set(this.holders);
        this.holders = holders;
      }
      this.slots[row] = slot;
    }
    this.holders[slot]!++;
    return slot;
  }

  /** One column fewer holds a value of the row: its slot is given back with the last. */
  letGo(row: number): void {
    const slot = this.slots[row]!;
    assert(slot !== NO_SLOT && this.holders[slot]! > 0, `row ${row} is let go of a slot it does not hold`);
    if (--this.holders[slot]! > 0) return;
    this.slots[row] = NO_SLOT;
    this.freeSlots.push(slot);
  }

  /** Checks that every slot is held by one row and counts `holdersOf(slot)` columns. */
  checkInvariants(holdersOf: (slot: number) => number): void {
    const rowOfSlot = new Map<number, number>();
    this.slots.forEach((slot, row) => {
      if (slot === NO_SLOT) return;
      assert(!rowOfSlot.has(slot), `slot ${slot} is held by rows ${rowOfSlot.get(slot)} and ${row}`);
      rowOfSlot.set(slot, row);
      assert(this.holders[slot] === holdersOf(slot), `slot ${slot} counts ${this.holders[slot]} columns, ${holdersOf(slot)} hold a value of it`);
    });
    assert(rowOfSlot.size + this.freeSlots.length === this.slotsUsed, `${this.slotsUsed} slots were made, ${rowOfSlot.size} are held and ${this.freeSlots.length} free`);
  }
}
