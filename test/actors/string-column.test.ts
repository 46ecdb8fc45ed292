import { describe, expect, test } from 'bun:test';
import { latin1Bytes, StringColumn } from '../../actors/connection/string-column.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

const order = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Strings that stress the byte form: prefixes of each other, the highest byte, wide characters, empty, very long. */
function strings(random: SeededRandom, count: number): string[] {
  const alphabet = ['0', '1', 'a', 'f', '-', '\u00ff', '\u00e9', '\u0100', '日', '\ud83d\ude00'];
  const made: string[] = ['', 'a', 'a'.repeat(0xfffd), 'b'.repeat(0xfffe), '0190a000-0000-7000-8000-00000000c01d'];
  while (made.length < count) {
    const wide = random.chance(0.1);
    const length = random.int(13);
    let text = '';
    for (let at = 0; at < length; at++) text += alphabet[random.int(wide ? alphabet.length : 7)]!;
    made.push(text);
  }
  return made;
}

function filled(values: readonly string[]): StringColumn {
  const column = new StringColumn();
  column.ensureRows(values.length);
  values.forEach((value, row) => column.set(row, value));
  return column;
}

describe('string column', () => {
  const values = strings(new SeededRandom(7), 400);

  test('the strings drawn are mostly distinct, and some are wide', () => {
    expect(new Set(values).size).toBeGreaterThan(300);
    expect(values.filter((value) => /[^\x00-\xff]/.test(value)).length).toBeGreaterThan(10);
  });

  test('gives back every string it was given, one byte a character or kept whole, and its length', () => {
    const column = filled(values);
    values.forEach((value, row) => {
      expect(column.get(row)).toBe(value);
      expect(column.lengthOf(row)).toBe(value.length);
      expect(column.has(row)).toBe(true);
    });
  });

  test('a new row, and a cleared one, holds no string; clearing an empty row frees nothing', () => {
    const column = filled(['x', 'y']);
    column.ensureRows(4);
    expect([0, 1, 2, 3, 4, 9].map((row) => column.has(row))).toEqual([true, true, false, false, false, false]);
    column.clear(0);
    expect(column.freedBytes).toBe(1);
    column.clear(0);
    column.clear(3);
    expect(column.freedBytes).toBe(1);
    expect(column.has(0)).toBe(false);
    expect(column.get(1)).toBe('y');
  });

  test('a string is kept as bytes when every character fits one and it is at most 65,533 long; otherwise whole', () => {
    const column = new StringColumn();
    column.ensureRows(6);
    column.set(0, '\u00ff\u00e9');
    column.set(1, 'a'.repeat(0xfffd));
    expect(column.wideStrings).toBe(0);
    expect(column.liveBytes).toBe(2 + 0xfffd);
    column.set(2, 'b'.repeat(0xfffe));
    column.set(3, '\u0100');
    expect(column.wideStrings).toBe(2);
    expect(column.liveBytes).toBe(2 + 0xfffd);
    // clearing a string kept whole frees no bytes of the buffer, and lets it go
    column.clear(3);
    expect([column.wideStrings, column.freedBytes]).toEqual([1, 0]);
    column.clear(0);
    expect(column.liveBytes).toBe(0xfffd);
  });

  test('Latin-1 bytes of a string are one per character, and there are none for a string with a wider character', () => {
    expect([...latin1Bytes('a\u00e9\u00ff')!]).toEqual([0x61, 0xe9, 0xff]);
    expect(latin1Bytes('')).toEqual(new Uint8Array(0));
    expect(latin1Bytes('a\u0100')).toBeNull();
    expect(latin1Bytes('😀')).toBeNull();
  });

  test('its footprint is the buffer and 6 bytes a row, and room reserved ahead counts in it', () => {
    const column = new StringColumn();
    column.ensureRows(1000);
    expect(column.footprintBytes).toBe(6000);
    column.reserveBytes(10_000);
    expect(column.footprintBytes).toBeGreaterThanOrEqual(16_000);
  });

  test("compares a row with a string, and two rows, in JavaScript's order of strings, and equals only the same string", () => {
    const column = filled(values);
    for (let a = 0; a < values.length; a += 3) {
      for (let b = 0; b < values.length; b += 7) {
        expect(Math.sign(column.compareTo(a, values[b]!))).toBe(order(values[a]!, values[b]!));
        expect(Math.sign(column.compareRows(a, b))).toBe(order(values[a]!, values[b]!));
        expect(column.equals(a, values[b]!)).toBe(values[a] === values[b]);
      }
    }
  });

  test('rows filled from one joined string, or its Latin-1 bytes, equal rows set one by one, with or without a wide character in it', () => {
    const narrow = values.filter((value) => /^[\x00-\xff]{0,40}$/.test(value));
    const cases: Array<[string[], string | Uint8Array]> = [
      [narrow, narrow.join('')],
      [narrow, latin1Bytes(narrow.join(''))!],
      [values, values.join('')],
    ];
    for (const [chosen, joined] of cases) {
      const column = new StringColumn();
      column.ensureRows(chosen.length + 2);
      column.set(0, 'before');
      column.setJoined(1, joined, Uint32Array.from(chosen.map((value) => value.length)));
      column.set(chosen.length + 1, 'after');
      expect(column.get(0)).toBe('before');
      chosen.forEach((value, index) => expect(column.get(index + 1)).toBe(value));
      expect(column.get(chosen.length + 1)).toBe('after');
    }
  });

  test('freed bytes are reclaimed once they are half of the buffer, and the strings left keep their values', () => {
    const count = 20_000;
    // every 1,000th string has a wide character: kept whole, it must stay out of the compacted buffer
    const ids = Array.from({ length: count }, (_, row) => `job-${row.toString(16).padStart(8, '0')}-${'x'.repeat(row % 7)}${row % 1000 === 3 ? '\u0100' : ''}`);
    const column = filled(ids);
    const footprintFull = column.footprintBytes;
    for (let row = 0; row < count; row += 4) column.clear(row);
    // a quarter freed (over 64 KiB, under half): nothing reclaimed yet
    expect(column.freedBytes).toBeGreaterThan(64 * 1024);
    expect(column.footprintBytes).toBe(footprintFull);
    for (let row = 1; row < count; row += 4) column.clear(row);
    for (let row = 2; row < count; row += 4) column.clear(row);
    // three quarters freed: a compaction has run, and what is freed since it is less than what is left
    expect(column.freedBytes).toBeLessThan(ids.filter((_, row) => row % 4 === 3).join('').length);
    // compacted once half was freed: a buffer for that half with room for half as much again, under the whole's bytes
    const total = ids.filter((id) => latin1Bytes(id) !== null).join('').length;
    expect(footprintFull - 6 * count).toBeGreaterThanOrEqual(total);
    expect(column.footprintBytes - 6 * count).toBeLessThanOrEqual(Math.ceil(total * 0.8));
    expect(column.liveBytes).toBe(ids.filter((id, row) => row % 4 === 3 && latin1Bytes(id) !== null).join('').length);
    ids.forEach((id, row) => {
      expect(column.has(row)).toBe(row % 4 === 3);
      if (row % 4 === 3) expect(column.get(row)).toBe(id);
    });
    // rows freed are set again, and compare right after the move
    column.set(0, ids[0]!);
    expect(column.compareRows(0, 3)).toBeLessThan(0);
    expect(column.get(0)).toBe(ids[0]!);
  });

  test('a column under 64 KiB of freed strings is never compacted: freeing all of a small one keeps the count', () => {
    const column = filled(values.filter((value) => value.length < 100 && /^[\x00-\xff]*$/.test(value)));
    const before = column.footprintBytes;
    for (let row = 0; row < 300; row++) column.clear(row);
    expect(column.footprintBytes).toBe(before);
    expect(column.freedBytes).toBeGreaterThan(0);
  });
});
