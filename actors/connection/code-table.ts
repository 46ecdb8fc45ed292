/**
 * A connection's few distinct task names, queues, workers and frameworks as small integer
 * codes, so a job's row holds four 4-byte codes instead of four string references. Each
 * code counts the rows holding it and is freed when none does: a client that invents a new
 * worker id per job cannot grow the table past the rows it keeps.
 */
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
    if (--this.holders[code]! > 0) return;
    this.codes.delete(this.strings[code]!);
    this.strings[code] = undefined;
    this.freeCodes.push(code);
  }

  /** The code `value` holds now, without counting a holder; NO_CODE when no row holds it. */
  codeOf(value: string): number {
    return this.codes.get(value) ?? NO_CODE;
  }

  /** The string of a held code; null for NO_CODE. */
  stringOf(code: number): string | null {
    return code === NO_CODE ? null : this.strings[code]!;
  }
}
