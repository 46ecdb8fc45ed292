/**
 * A connection's few distinct task names, queues, workers and frameworks as small integer
 * codes, so a job's row holds four 4-byte codes instead of four string references. Each
 * code counts the rows holding it and is freed when none does: a client that invents a new
 * worker id per job cannot grow the table past the rows it keeps.
 */
import { assert } from '../domain-error.ts';

export const NO_CODE = -1;

export class CodeTable {
  private readonly codes = new Map<string, number>();
  private readonly strings: Array<string | undefined> = [];
  private holders = new Int32Array(16);
  /** codes no row holds any more, taken again before the table grows */
  private readonly freeCodes: number[] = [];

  /** Distinct strings held. */
  get size(): number {
    return this.codes.size;
  }

  /** The code of `value`, counted as held once more; NO_CODE for null. */
  acquire(value: string | null): number {
    if (value === null) return NO_CODE;
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.freeCodes.pop() ?? this.strings.length;
      this.strings[code] = value;
      this.codes.set(value, code);
      if (code >= this.holders.length) {
        const grown = new Int32Array(this.holders.length * 2);
        grown.set(this.holders);
        this.holders = grown;
      }
    }
    this.holders[code]!++;
    return code;
  }

  /** One holder of `code` fewer; the code is freed with its last holder. */
  release(code: number): void {
    if (code === NO_CODE) return;
    assert(code < this.strings.length && this.holders[code]! > 0, `code ${code} is released, but no row holds it`);
    if (--this.holders[code]! > 0) return;
    this.codes.delete(this.strings[code]!);
    this.strings[code] = undefined;
    this.freeCodes.push(code);
  }

  /** The code `value` holds now, without counting a holder; NO_CODE when no row holds it. */
  codeOf(value: string): number {
    return this.codes.get(value) ?? NO_CODE;
  }

  /** Checks that each code is held by as many rows as `counted` says (a code absent from it by none); throws naming the first that is not. */
  checkHolders(counted: ReadonlyMap<number, number>): void {
    for (let code = 0; code < this.strings.length; code++) {
      const expected = counted.get(code) ?? 0;
      assert(this.holders[code] === expected, `code ${code} ('${this.strings[code]}') counts ${this.holders[code]} holders, ${expected} rows hold it`);
      assert((this.strings[code] !== undefined) === (expected > 0), `code ${code} is ${expected > 0 ? 'held but freed' : 'free but kept'}`);
    }
    assert(this.codes.size === counted.size, `the code table holds ${this.codes.size} strings, rows hold ${counted.size}`);
  }

  /** The string of a held code; null for NO_CODE. */
  stringOf(code: number): string | null {
    return code === NO_CODE ? null : this.strings[code]!;
  }
}
