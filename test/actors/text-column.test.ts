import { describe, expect, test } from 'bun:test';
import { SparseRows } from '../../actors/connection/sparse-rows.ts';
import { TextColumn, TEXT_HEADER_BYTES, TEXT_SEGMENT_BYTES } from '../../actors/connection/text-column.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text));

/** Every row whose text holds `needle`, as the column's search finds them. */
function found(column: TextColumn, needle: string): number[] {
  const rows: number[] = [];
  expect(
    column.findRows(bytes(needle), (row) => {
      rows.push(row);
    }),
  ).toBe(true);
  return rows.sort((a, b) => a - b);
}

describe('the text column', () => {
  test('gives back every text it was given (UTF-8, any length), its byte length, and none for an empty or cleared row', () => {
    const column = new TextColumn();
    column.ensureRows(4);
    const texts = ['{"a":1}', '["Jürgen","😀",null]', `"${'x'.repeat(300_000)}"`];
    texts.forEach((text, row) => column.set(row, text));
    expect(texts.map((_, row) => column.get(row))).toEqual(texts);
    expect(texts.map((_, row) => column.byteLength(row))).toEqual(texts.map((text) => Buffer.byteLength(text)));
    expect([column.has(3), column.getOrNull(3), column.byteLength(3), column.size]).toEqual([false, null, 0, 3]);
    column.clear(1);
    column.clear(1);
    expect([column.has(1), column.getOrNull(1), column.size]).toEqual([false, null, 2]);
    expect(column.liveBytes).toBe(Buffer.byteLength(texts[0]!) + Buffer.byteLength(texts[2]!));
    expect(column.heldBytes).toBe(column.liveBytes + 2 * TEXT_HEADER_BYTES);
    column.checkInvariants();
  });

  test('refuses a text over a held row, a text with an unescaped U+0000 (never JSON), and one larger than a segment', () => {
    const column = new TextColumn();
    column.ensureRows(1);
    expect(() => column.set(0, `"${'x'.repeat(TEXT_SEGMENT_BYTES)}"`)).toThrow('past the');
    column.set(0, '1');
    expect(() => column.set(0, '2')).toThrow('already holds a text');
    column.clear(0);
    expect(() => column.set(0, '"a\u0000b"')).toThrow('U+0000');
    expect(() => column.get(0)).toThrow('holds no text');
  });

  test('finds each row whose text holds the needle once, however often, and never in a freed text or a header', () => {
    const column = new TextColumn();
    column.ensureRows(300);
    for (let row = 0; row < 300; row++) column.set(row, JSON.stringify({ userId: row, tag: row % 3 === 0 ? 'vip vip vip' : 'plain' }));
    expect(found(column, '"userId":42,')).toEqual([42]);
    expect(found(column, 'vip')).toEqual(Array.from({ length: 100 }, (_, i) => i * 3));
    column.clear(42);
    column.set(42, '{"userId":"moved"}');
    column.clear(3);
    expect(found(column, '"userId":42,')).toEqual([]);
    expect(found(column, 'moved')).toEqual([42]);
    expect(found(column, 'vip')).toEqual(Array.from({ length: 100 }, (_, i) => i * 3).filter((row) => row !== 3 && row !== 42));
    // a row number's digits are bytes 1..255 in the header: a needle of such bytes is not found there
    const digits = String.fromCharCode(1, 1, 1);
    expect(found(column, digits)).toEqual([]);
    expect(found(column, 'no such text')).toEqual([]);
    column.checkInvariants();
  });

  test('a search across its 8 MiB segments finds each matching row once, and stops between segments when asked', () => {
    const column = new TextColumn();
    column.ensureRows(80);
    // texts of ~200 KB: 16 MB, two segments and more
    for (let row = 0; row < 80; row++) column.set(row, JSON.stringify({ row, pad: 'p'.repeat(200_000 + row * 13), end: row % 2 === 0 ? 'needle-here' : 'none' }));
    expect(column.footprintBytes).toBeGreaterThan(2 * TEXT_SEGMENT_BYTES);
    expect(found(column, 'needle-here')).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
    expect(found(column, 'pp')).toHaveLength(80);
    let checks = 0;
    const partial: number[] = [];
    expect(
      column.findRows(
        bytes('needle-here'),
        (row) => {
          partial.push(row);
        },
        () => ++checks >= 1,
      ),
    ).toBe(false);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(40);
  });

  test('given random sets and clears, then every row reads what it was last given, compaction included, and the buffer stays bounded', () => {
    for (const seed of [1, 2, 3]) {
      const random = new SeededRandom(seed);
      const column = new TextColumn();
      const reference = new Map<number, string>();
      column.ensureRows(200);
      for (let step = 0; step < 8_000; step++) {
        const row = random.int(200);
        if (reference.has(row)) {
          column.clear(row);
          reference.delete(row);
        }
        if (random.next() < 0.6) {
          const text = JSON.stringify({ step, body: 'ü'.repeat(random.int(2_000)) });
          column.set(row, text);
          reference.set(row, text);
        }
      }
      for (let row = 0; row < 200; row++) expect(column.getOrNull(row)).toBe(reference.get(row) ?? null);
      column.checkInvariants();
      const live = [...reference.values()].reduce((sum, text) => sum + Buffer.byteLength(text) + TEXT_HEADER_BYTES, 0);
      expect(column.heldBytes).toBe(live);
      // freed bytes are reclaimed once they are half of what is used
      expect(column.freedBytes).toBeLessThanOrEqual(Math.max(64 * 1024, live));
    }
  });

  test('a visitor may refuse a match (by what follows it): the rest of that text is searched on, and a later match there counts', () => {
    const column = new TextColumn();
    column.ensureRows(3);
    column.set(0, '{"id":421,"other":{"id":42}}');
    column.set(1, '{"id":4200}');
    column.set(2, '{"id":42}');
    const rows: number[] = [];
    const complete = column.findRows(bytes('"id":42'), (row, at) => {
      const next = column.byteAt(at + '"id":42'.length);
      if (next !== 0x2c && next !== 0x7d) return false;
      rows.push(row);
      return true;
    });
    expect([complete, rows]).toEqual([true, [0, 2]]);
    expect(column.byteAt(1_000_000)).toBe(0);
  });

  test('columns of rare fields share one slot per row that holds any: taken with the first text, given back with the last, reused', () => {
    const sparse = new SparseRows();
    const results = new TextColumn(sparse);
    const logs = new TextColumn(sparse);
    for (const column of [results, logs]) column.ensureRows(1000);
    results.set(900, '"r"');
    logs.set(900, '["l"]');
    logs.set(5, '["only a log"]');
    expect([sparse.slotOf(900), sparse.slotOf(5), sparse.slotOf(6), sparse.slotSpan]).toEqual([0, 1, -1, 2]);
    results.clear(900);
    expect([sparse.slotOf(900), logs.get(900), results.has(900)]).toEqual([0, '["l"]', false]);
    logs.clear(900);
    expect(sparse.slotOf(900)).toBe(-1);
    results.set(42, '"taken again"');
    expect([sparse.slotOf(42), sparse.slotSpan, results.get(42), logs.get(5)]).toEqual([0, 2, '"taken again"', '["only a log"]']);
    for (const column of [results, logs]) column.checkInvariants();
    sparse.checkInvariants((slot) => [results, logs].filter((column) => column.holdsSlot(slot)).length);
    expect(() => sparse.letGo(7)).toThrow('does not hold');
    // compaction moves a sparse column's texts and keeps their slots
    for (let round = 0; round < 40; round++) {
      for (let row = 100; row < 200; row++) {
        results.clear(row);
        results.set(row, JSON.stringify({ row, round, pad: 'x'.repeat(2_000) }));
      }
    }
    expect(results.get(150)).toBe(JSON.stringify({ row: 150, round: 39, pad: 'x'.repeat(2_000) }));
    results.checkInvariants();
    sparse.checkInvariants((slot) => [results, logs].filter((column) => column.holdsSlot(slot)).length);
  });

  test('rows set from bytes (a snapshot) read as rows set from text', () => {
    const column = new TextColumn();
    column.ensureRows(3);
    const joined = Buffer.from('{"a":1}["é"]');
    column.setBytes(0, joined, 0, 7);
    column.setBytes(2, joined, 7, joined.length);
    expect([column.get(0), column.getOrNull(1), column.get(2)]).toEqual(['{"a":1}', null, '["é"]']);
    column.checkInvariants();
  });
});
