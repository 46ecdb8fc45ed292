/**
 * The byte-level structure check of request bodies (src/http/json-shape.ts) and the ingest
 * body parsed event by event (src/http/ingest-body.ts): hostile shapes are refused as the
 * bytes arrive, and a body cut into its events parses to exactly what one JSON.parse gives,
 * wherever the chunks of the upload fall.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { DomainError } from '../../actors/domain-error.ts';
import { refusal } from '../support/refusal.ts';
import { JSON_SHAPE_LIMITS, JsonShapeScanner, type SplitLimits } from '../../src/http/json-shape.ts';
import { INGEST_ENVELOPE_BYTES_MAX, readIngestBody } from '../../src/http/ingest-body.ts';
import { bodyReader } from '../../src/http/read-body.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const SPLIT: SplitLimits = { key: 'events', elementBytesMax: 1 << 20, elementMembersMax: 1 << 16 };

function scan(text: string, chunkBytes = 1 << 20, limits = JSON_SHAPE_LIMITS, split: SplitLimits | null = SPLIT): JsonShapeScanner {
  const scanner = new JsonShapeScanner(limits, split);
  const bytes = encode(text);
  for (let at = 0; at < bytes.length; at += chunkBytes) scanner.feed(bytes.subarray(at, at + chunkBytes));
  return scanner;
}

/** The element texts the scanner found in `text`. */
function pieces(text: string, chunkBytes?: number): string[] {
  const split = scan(text, chunkBytes).splitArray();
  if (split === null) return [];
  const bytes = encode(text);
  const found: string[] = [];
  for (let i = 0; i < split.spans.length; i += 2) found.push(new TextDecoder().decode(bytes.subarray(split.spans[i], split.spans[i + 1])));
  return found;
}

describe('structure limits', () => {
  test('nesting deeper than the limit is refused with a 400 naming the limit; at the limit it passes', () => {
    const limit = JSON_SHAPE_LIMITS.depthMax;
    expect(() => scan('['.repeat(limit) + ']'.repeat(limit))).not.toThrow();
    const error = refusal(() => scan('['.repeat(limit + 1) + ']'.repeat(limit + 1)));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual({ body: [`must not nest more than ${limit} levels deep`] });
    expect(error.headers).toEqual({ connection: 'close' });
  });

  test('5 MB of nested brackets is refused after the first levels, whatever follows', () => {
    const scanner = new JsonShapeScanner();
    const head = encode('{"events":' + '['.repeat(JSON_SHAPE_LIMITS.depthMax + 1));
    expect(() => scanner.feed(head)).toThrow(/levels deep/);
  });

  test('an object with more members than the limit is refused; at the limit it passes', () => {
    const object = (members: number) => `{${Array.from({ length: members }, (_, k) => `"k${k}":1`).join(',')}}`;
    expect(() => scan(object(JSON_SHAPE_LIMITS.objectMembersMax))).not.toThrow();
    expect(refusal(() => scan(object(JSON_SHAPE_LIMITS.objectMembersMax + 1))).details).toEqual({
      body: [`must not hold more than ${JSON_SHAPE_LIMITS.objectMembersMax} members in one object`],
    });
  });

  test('an array with more elements than the limit is refused; at the limit it passes', () => {
    const array = (elements: number) => `[${new Array(elements).fill('0').join(',')}]`;
    expect(() => scan(array(JSON_SHAPE_LIMITS.arrayElementsMax))).not.toThrow();
    expect(refusal(() => scan(array(JSON_SHAPE_LIMITS.arrayElementsMax + 1))).details).toEqual({
      body: [`must not hold more than ${JSON_SHAPE_LIMITS.arrayElementsMax} elements in one array`],
    });
  });

  test('brackets, braces and commas inside strings (escaped quotes too) are not structure', () => {
    const inside = `"${'[{,'.repeat(JSON_SHAPE_LIMITS.objectMembersMax)}\\"[[[\\\\"`;
    expect(() => scan(`{"a":${inside},"b":[${inside}]}`, 7)).not.toThrow();
    // a quote after an even run of backslashes ends the string: what follows is structure again
    const limits = { ...JSON_SHAPE_LIMITS, depthMax: 2, hostileDepthMax: 2 };
    expect(() => scan('["\\\\"]', 1, limits)).not.toThrow();
    expect(() => scan('["\\\\",[[1]]]', 1, limits)).toThrow(/levels deep/);
  });

  test('the contract limits sit within the structure limits: 8 levels of extensions inside an event pass', () => {
    let extensions: unknown = { leaf: 1 };
    for (let level = 1; level < 8; level++) extensions = { level, inner: extensions };
    const body = JSON.stringify({ events: [{ type: 'job_state_change', job: { extensions } }] });
    expect(() => scan(body, 3)).not.toThrow();
  });

  test('members of the whole body are counted (commas and containers)', () => {
    expect(scan('{"a":[1,2,3],"b":{}}').members).toBe(6); // 3 containers, 3 commas
    expect(scan('"just a string, with [brackets]"').members).toBe(0);
  });
});

describe('the events array found in the bytes', () => {
  test('each element is found with the whitespace around it, across any chunk size', () => {
    const body = '{ "x" : 1 , "events" : [ {"a":"],[}"} , [1,[2]] ,"s\\"," , 3 ] , "y":[9,9] }';
    for (const chunk of [1, 2, 3, 5, 8, 1000]) expect(pieces(body, chunk)).toEqual([' {"a":"],[}"} ', ' [1,[2]] ', '"s\\"," ', ' 3 ']);
  });

  test('an empty array has no elements; an array elsewhere or deeper is not the one', () => {
    expect(scan('{"events":[ ]}').splitArray()).toEqual({ start: 10, end: 12, spans: [], refused: new Map() });
    expect(scan('[{"events":[1]}]').splitArray()).toBeNull();
    expect(scan('{"a":{"events":[1]}}').splitArray()).toBeNull();
    expect(scan('{"events":{"0":1}}').splitArray()).toBeNull();
    expect(scan('{"other":[1],"x":"events"}').splitArray()).toBeNull();
  });

  test('a key written with escapes is the same key, and a repeated key replaces the array as JSON.parse does', () => {
    expect(pieces('{"\\u0065vents":[1,2]}')).toEqual(['1', '2']);
    expect(pieces('{"events":[1,2],"events":[3]}')).toEqual(['3']);
    expect(scan('{"events":[1,2],"events":5}').splitArray()).toBeNull();
  });

  test('an element over the byte or member limit is refused, naming the event', () => {
    const split = { ...SPLIT, elementBytesMax: 10, elementMembersMax: 3 };
    expect(() => scan('{"events":[1,"123456"]}', 1 << 20, JSON_SHAPE_LIMITS, split)).not.toThrow();
    const large = refusal(() => scan('{"events":[1,"1234567890"]}', 1 << 20, JSON_SHAPE_LIMITS, split));
    expect(large.details).toEqual({ 'events[1]': ['event 1 must be at most 10 bytes'] });
    // a long element is refused as it grows, before its end arrives
    const growing = new JsonShapeScanner(JSON_SHAPE_LIMITS, split);
    expect(() => growing.feed(encode('{"events":[0,"12345678901234'))).toThrow(/event 1 must be at most 10 bytes/);
    const wide = refusal(() => scan('{"events":[[1,2],[1,[2,3]]]}', 1 << 20, JSON_SHAPE_LIMITS, split));
    expect(wide.details).toEqual({ 'events[1]': ['event 1 must not hold more than 3 values'] });
  });
});

describe('an ingest body parsed event by event', () => {
  const reader = bodyReader({ config: { bodyTimeoutMs: 10_000 } as never, logError: () => undefined });
  /** A streamed upload (no Content-Length) in chunks of `chunkBytes`, as a socket delivers it. */
  const upload = (text: string, chunkBytes: number) => {
    const bytes = encode(text);
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + chunkBytes));
        at += chunkBytes;
      },
    });
    return new Request('http://localhost/api/ingest', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  };
  const piecewise = { bytesMax: 0, membersMax: 0 };

  test('gives what one JSON.parse gives, for any events and any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 12 }), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), fc.integer({ min: 1, max: 64 }), async (events, extra, chunkBytes) => {
        const text = JSON.stringify({ ...extra, events });
        expect((await readIngestBody(reader, upload(text, chunkBytes), 1 << 20, [], piecewise)).body).toEqual(JSON.parse(text));
      }),
      { numRuns: 150 },
    );
  });

  test('long strings of escaped quotes and backslashes end where JSON says, wherever the chunks fall', async () => {
    const tricky = fc.array(fc.constantFrom('"', '\\', 'a', ']', ',', '{', '\n', 'é'), { minLength: 20, maxLength: 120 }).map((chars) => chars.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ s: tricky, t: fc.array(tricky, { maxLength: 3 }) }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 40 }), async (events, chunkBytes) => {
        const text = JSON.stringify({ events });
        expect((await readIngestBody(reader, upload(text, chunkBytes), 1 << 20, [], piecewise)).body).toEqual(JSON.parse(text));
      }),
      { numRuns: 150 },
    );
  });

  test('a body that is not JSON is refused the same way, wherever the flaw is', async () => {
    for (const text of ['{"events":[1 2]}', '{"events":[1,]}', '{"events":[,1]}', '{"events":[1],}', '{"a" "events":[1]}', '{"events":[{"a":1}}]}', ']{"events":[1]}']) {
      const error = await readIngestBody(reader, upload(text, 3), 1 << 20, [], piecewise).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('VALIDATION_ERROR');
    }
  });

  test('a large body without a top-level events array is refused without being parsed', async () => {
    const error = (await readIngestBody(reader, upload('{"event":[1]}', 5), 1 << 20, [], piecewise).catch((caught: unknown) => caught)) as DomainError;
    expect(error.details).toEqual({ events: ['is required and must be an array'] });
  });

  test('more than the envelope allows besides the events is refused', async () => {
    const padding = 'x'.repeat(INGEST_ENVELOPE_BYTES_MAX);
    const error = (await readIngestBody(reader, upload(JSON.stringify({ padding, events: [1] }), 4096), 1 << 20, [], piecewise).catch((caught: unknown) => caught)) as DomainError;
    expect(error.details).toEqual({ body: [`must carry at most ${INGEST_ENVELOPE_BYTES_MAX} bytes besides its events`] });
    const fits = JSON.stringify({ padding: 'x'.repeat(INGEST_ENVELOPE_BYTES_MAX - 100), events: [1] });
    expect((await readIngestBody(reader, upload(fits, 4096), 1 << 20, [], piecewise)).body).toEqual(JSON.parse(fits));
  });
});

describe('a structure limit broken inside one event refuses that event only', () => {
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  const EVENT_DEPTH_MAX = JSON_SHAPE_LIMITS.depthMax - 2;

  test('an event nesting deeper than the limit is refused on its own; the events around it are found whole, across any chunk size', () => {
    const body = `{"events":[{"a":1},{"progress":${deep(40)}},{"b":[2]}],"x":1}`;
    for (const chunk of [1, 3, 7, 64, 1 << 20]) {
      const split = scan(body, chunk).splitArray()!;
      expect(split.refused).toEqual(new Map([[1, `must not nest more than ${EVENT_DEPTH_MAX} levels deep (the event itself is level 1)`]]));
      expect(pieces(body, chunk)).toEqual(['{"a":1}', `{"progress":${deep(40)}}`, '{"b":[2]}']);
    }
    // at the limit it passes: the event is level 3 of the body
    expect(scan(`{"events":[${deep(EVENT_DEPTH_MAX)}]}`).splitArray()!.refused.size).toBe(0);
    expect(scan(`{"events":[${deep(EVENT_DEPTH_MAX + 1)}]}`).splitArray()!.refused.size).toBe(1);
  });

  test('too many members in one object or array inside an event refuses the event; elsewhere, the body', () => {
    const limits = { ...JSON_SHAPE_LIMITS, objectMembersMax: 3, arrayElementsMax: 4 };
    const split = scan('{"events":[{"a":1,"b":2,"c":3},{"a":1,"b":2,"c":3,"d":4},[[1,2,3,4,5]],[1,2]]}', 5, limits).splitArray()!;
    expect(split.refused).toEqual(
      new Map([
        [1, 'must not hold more than 3 members in one object'],
        [2, 'must not hold more than 4 elements in one array'],
      ]),
    );
    expect(split.spans.length / 2).toBe(4);
    expect(refusal(() => scan('{"a":1,"b":2,"c":3,"events":[1]}', 5, limits)).details).toEqual({ body: ['must not hold more than 3 members in one object'] });
    // the events array itself is the body's
    expect(refusal(() => scan('{"events":[1,2,3,4,5]}', 5, limits)).details).toEqual({ body: ['must not hold more than 4 elements in one array'] });
  });

  test('nesting outside the events array is still the body\'s refusal', () => {
    const error = refusal(() => scan(`{"other":${deep(40)},"events":[1]}`));
    expect(error.details).toEqual({ body: [`must not nest more than ${JSON_SHAPE_LIMITS.depthMax} levels deep`] });
  });

  test('an event that nests without end is still bounded: past the hostile depth the body is refused, the rest unread', () => {
    const scanner = new JsonShapeScanner(JSON_SHAPE_LIMITS, SPLIT);
    const head = encode('{"events":[{"a":' + '['.repeat(JSON_SHAPE_LIMITS.hostileDepthMax));
    expect(() => scanner.feed(head)).toThrow(`must not nest more than ${JSON_SHAPE_LIMITS.hostileDepthMax} levels deep anywhere`);
    // at the hostile depth it is the event's refusal only
    expect(scan(`{"events":[${deep(JSON_SHAPE_LIMITS.hostileDepthMax - 2)}]}`).splitArray()!.refused.size).toBe(1);
    // and past its values, whatever its depth
    const wide = new JsonShapeScanner(JSON_SHAPE_LIMITS, SPLIT);
    expect(() => wide.feed(encode('{"events":[[' + '[0],'.repeat(SPLIT.elementMembersMax)))).toThrow(`event 0 must not hold more than ${SPLIT.elementMembersMax} values`);
  });

  test('the refused event is null in the body read, and named with what it broke, whether the body is parsed whole or event by event', async () => {
    const reader = bodyReader({ config: { bodyTimeoutMs: 10_000 } as never, logError: () => undefined });
    const text = `{"events":[{"a":1},{"progress":${deep(40)}},{"b":2}]}`;
    for (const wholeParse of [{ bytesMax: 1 << 20, membersMax: 1 << 20 }, { bytesMax: 0, membersMax: 0 }]) {
      const request = new Request('http://localhost/api/ingest', { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
      const read = await readIngestBody(reader, request, 1 << 20, [], wholeParse);
      expect(read.body).toEqual({ events: [{ a: 1 }, null, { b: 2 }] });
      expect([...read.refusedEvents]).toEqual([[1, `must not nest more than ${EVENT_DEPTH_MAX} levels deep (the event itself is level 1)`]]);
    }
  });
});

describe('content outside the events array is counted as the bytes arrive', () => {
  const envelopeOf = (extra: Record<string, unknown>) => JSON.stringify({ ...extra, events: [] }).length - 2;

  test('the content the envelope parse would work through: everything outside the array but whitespace between tokens', async () => {
    const keys = fc.string().filter((key) => key !== '__proto__' && key !== 'events');
    await fc.assert(
      fc.property(fc.dictionary(keys, fc.jsonValue({ maxDepth: 2 })), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }), fc.integer({ min: 1, max: 32 }), fc.boolean(), (extra, events, chunkBytes, pretty) => {
        const text = pretty ? JSON.stringify({ ...extra, events }, null, 2) : JSON.stringify({ ...extra, events });
        expect(scan(text, chunkBytes).outsideContentBytes).toBe(envelopeOf(extra));
      }),
      { numRuns: 200 },
    );
  });

  test('a long string counts with its length, whitespace inside it too; a replaced events array counts as the envelope\'s', () => {
    expect(scan(`{"padding":"${' '.repeat(100_000)}","events":[1]}`, 4096).outsideContentBytes).toBe(envelopeOf({ padding: ' '.repeat(100_000) }));
    expect(scan('  {  "events" : [1,2] ,\n"events":[3]  }  ').outsideContentBytes).toBe('{"events":[1,2],"events":[]}'.length - 2);
  });

  test('a body sure to be parsed in pieces is refused once its envelope passes the limit, the rest unread', async () => {
    const reader = bodyReader({ config: { bodyTimeoutMs: 10_000 } as never, logError: () => undefined });
    const text = JSON.stringify({ events: [1], note: 'x'.repeat(5 * INGEST_ENVELOPE_BYTES_MAX) });
    const bytes = encode(text);
    let pulled = 0;
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(pulled, pulled + 4096));
        pulled += 4096;
      },
    });
    const declared = new Request('http://localhost/api/ingest', { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) }, body: streamed });
    const wholeParse = { bytesMax: 2 * INGEST_ENVELOPE_BYTES_MAX, membersMax: 1 << 20 };
    const error = (await readIngestBody(reader, declared, 1 << 22, [], wholeParse).catch((caught: unknown) => caught)) as DomainError;
    expect(error.details).toEqual({ body: [`must carry at most ${INGEST_ENVELOPE_BYTES_MAX} bytes besides its events`] });
    expect(error.headers).toEqual({ connection: 'close' });
    // declared longer than a whole parse takes: refused as soon as the count passed the limit
    expect(pulled).toBeLessThan(INGEST_ENVELOPE_BYTES_MAX + 3 * 4096);
  });
});
