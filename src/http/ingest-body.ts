/**
 * Reads an ingest body and parses it without holding the event loop: the structure is
 * checked while the bytes arrive (json-shape.ts), then a large body's envelope and each of
 * its events are parsed on their own, in slices with turns of the event loop between them
 * (turn-slices.ts), and so are the events validated. One `JSON.parse` of a 5 MB body held
 * the loop up to a quarter of a second for a body the contract allows and over half a
 * second for one it refuses; an event is at most `INGEST_EVENT_BYTES_MAX` bytes and
 * `INGEST_EVENT_MEMBERS_MAX` members, so no single parse is long.
 */
import type { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { EventVerdict } from '../../actors/ingest/validate-event.ts';
import type { BodyReader, BodyWatcher } from './read-body.ts';
import { notJson, parseJson, requireJsonContentType } from './read-body.ts';
import { JsonShapeScanner, JSON_SHAPE_LIMITS, type SplitArray } from './json-shape.ts';
import { TurnSlices } from './turn-slices.ts';

/**
 * The most one event may take. The contract's largest fields written with every character
 * escaped (`\uXXXX`, 6 bytes): a 50,000-character stacktrace, a 10,000-character error,
 * 64 KB of extensions (3 times over, escaped), names and ids: under 600 KB. Arguments and
 * results kept whole at their default caps (64 KiB each) fit beside them unescaped; larger
 * ones are kept cut, as long as the event stays within this.
 */
export const INGEST_EVENT_BYTES_MAX = 1024 * 1024;
/** Members of an event's objects and arrays together: 64 KB of extensions, of arguments and of a result hold at most 32,768 each (`0,`). */
export const INGEST_EVENT_MEMBERS_MAX = 128 * 1024;
/**
 * A body within both is parsed in one piece: cutting it up would cost more than it saves,
 * and its parse is short (about a microsecond per member at worst, for members that are keys).
 */
export const WHOLE_PARSE_BYTES_MAX = 1024 * 1024;
export const WHOLE_PARSE_MEMBERS_MAX = 32 * 1024;
/** What a body may carry besides its `events` array (the envelope has nothing else). */
export const INGEST_ENVELOPE_BYTES_MAX = 64 * 1024;

/** A body within both is parsed in one piece (tests lower them to see the pieces parsed). */
export interface WholeParseLimits {
  bytesMax: number;
  membersMax: number;
}

const WHOLE_PARSE: WholeParseLimits = { bytesMax: WHOLE_PARSE_BYTES_MAX, membersMax: WHOLE_PARSE_MEMBERS_MAX };

/** The parsed body, its `events` parsed one by one when it is large; `watchers` see the bytes too. */
export async function readIngestBody(
  reader: BodyReader,
  request: Request,
  maxBytes: number,
  watchers: readonly BodyWatcher[] = [],
  wholeParse: WholeParseLimits = WHOLE_PARSE,
): Promise<unknown> {
  requireJsonContentType(request);
  const scanner = new JsonShapeScanner(JSON_SHAPE_LIMITS, { key: 'events', elementBytesMax: INGEST_EVENT_BYTES_MAX, elementMembersMax: INGEST_EVENT_MEMBERS_MAX });
  const bytes = await reader.bytes(request, maxBytes, [...watchers, scanner]);
  if (bytes.length <= wholeParse.bytesMax && scanner.members <= wholeParse.membersMax) return parseJson(bytes);
  const split = scanner.splitArray();
  if (split === null) throw new DomainError('VALIDATION_ERROR', 'request body failed schema validation', { events: ['is required and must be an array'] });
  return parseInSlices(bytes, split);
}

async function parseInSlices(bytes: Uint8Array, split: SplitArray): Promise<unknown> {
  if (outsideContentBytes(bytes, split) > INGEST_ENVELOPE_BYTES_MAX) {
    const problem = `must carry at most ${INGEST_ENVELOPE_BYTES_MAX} bytes besides its events`;
    throw new DomainError('VALIDATION_ERROR', `request body ${problem}`, { body: [problem] });
  }
  const envelope = parseEnvelope(bytes, split);
  const events: unknown[] = [];
  const slices = new TurnSlices();
  const { spans } = split;
  for (let i = 0; i < spans.length; i += 2) {
    await slices.next();
    events.push(parseJson(bytes.subarray(spans[i]!, spans[i + 1]!)));
  }
  envelope.events = events;
  return envelope;
}

const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The bytes outside the `events` array that are not whitespace: what the envelope's one parse
 * works through. Whitespace costs that parse next to nothing, and a body padded with it (up to
 * the 5 MB limit) is a body the contract allows.
 */
function outsideContentBytes(bytes: Uint8Array, split: SplitArray): number {
  let content = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (i === split.start) i = split.end;
    if (i < bytes.length && !JSON_WHITESPACE.has(bytes[i]!)) content++;
  }
  return content;
}

/** The body with the array emptied: `{"events":[]}` and whatever else it carries. */
function parseEnvelope(bytes: Uint8Array, split: SplitArray): Record<string, unknown> {
  const skeleton = new Uint8Array(bytes.length - (split.end - split.start - 1));
  skeleton.set(bytes.subarray(0, split.start + 1));
  skeleton.set(bytes.subarray(split.end), split.start + 1);
  const envelope = parseJson(skeleton);
  // the scanner found the array as the top-level object's member, so this holds for any JSON it let through
  if (envelope === null || typeof envelope !== 'object' || !Array.isArray((envelope as { events?: unknown }).events)) throw notJson();
  return envelope as Record<string, unknown>;
}

/** Each event validated as the connection's decision would, in slices between turns of the event loop. */
export async function validateInSlices(actor: ConnectionActor, events: readonly unknown[], nowMs: number): Promise<EventVerdict[]> {
  const verdicts: EventVerdict[] = [];
  const slices = new TurnSlices();
  for (const event of events) {
    await slices.next();
    verdicts.push(actor.validateIngestEvent(event, nowMs));
  }
  return verdicts;
}
