/**
 * Reads an ingest body and parses it without holding the event loop: the structure is
 * checked while the bytes arrive (json-shape.ts), then a large body's envelope and each of
 * its events are parsed on their own, in slices with turns of the event loop between them
 * (persistence/turn-slices.ts), and so are the events validated. One `JSON.parse` of a 5 MB body held
 * the loop up to a quarter of a second for a body the contract allows and over half a
 * second for one it refuses; an event is at most `INGEST_EVENT_BYTES_MAX` bytes and
 * `INGEST_EVENT_MEMBERS_MAX` members, so no single parse is long. An event that breaks a
 * structure limit inside itself (json-shape.ts) is not parsed: it is refused on its own,
 * with what it broke, and the others go on.
 */
import type { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { EventVerdict } from '../../actors/ingest/validate-event.ts';
import type { BodyReader, BodyWatcher } from './read-body.ts';
import { declaredLength, notJson, parseJson, requireJsonContentType } from './read-body.ts';
import { envelopeRefusal, JsonShapeScanner, JSON_SHAPE_LIMITS, type SplitArray } from './json-shape.ts';
import { TurnSlices } from '../../persistence/turn-slices.ts';

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

/** An ingest body read: `body` as JSON.parse would give it, but each refused event null in `body.events`. */
export interface IngestBody {
  body: unknown;
  /** events refused for a structure limit broken inside them, by index: what they broke */
  refusedEvents: ReadonlyMap<number, string>;
}

const NONE_REFUSED: ReadonlyMap<number, string> = new Map();

/** The parsed body, its `events` parsed one by one when it is large; `watchers` see the bytes too. */
export async function readIngestBody(
  reader: BodyReader,
  request: Request,
  maxBytes: number,
  watchers: readonly BodyWatcher[] = [],
  wholeParse: WholeParseLimits = WHOLE_PARSE,
): Promise<IngestBody> {
  requireJsonContentType(request);
  // a body longer than a whole parse takes is parsed in pieces: its envelope limit holds from its first byte
  const declared = declaredLength(request);
  const scanner = new JsonShapeScanner(JSON_SHAPE_LIMITS, {
    key: 'events',
    elementBytesMax: INGEST_EVENT_BYTES_MAX,
    elementMembersMax: INGEST_EVENT_MEMBERS_MAX,
    envelopeBytesMax: INGEST_ENVELOPE_BYTES_MAX,
    envelopeCheckedFrom: declared !== null && declared > wholeParse.bytesMax ? 0 : wholeParse.bytesMax + 1,
  });
  const bytes = await reader.bytes(request, maxBytes, [...watchers, scanner]);
  const split = scanner.splitArray();
  if (bytes.length <= wholeParse.bytesMax && scanner.members <= wholeParse.membersMax) {
    const body = parseJson(bytes);
    const refusedEvents = split?.refused ?? NONE_REFUSED;
    // the scanner's array is the one JSON.parse kept, so its element indexes are the array's
    const events = (body as { events?: unknown } | null)?.events;
    if (Array.isArray(events)) for (const index of refusedEvents.keys()) events[index] = null;
    return { body, refusedEvents };
  }
  if (split === null) throw new DomainError('VALIDATION_ERROR', 'request body failed schema validation', { events: ['is required and must be an array'] });
  // counted by the scanner as the bytes arrived (a walk over 5 MB held the event loop 30-60 ms); a
  // body over it was refused then if it was sure to come here, else (many members in few bytes) now
  if (scanner.outsideContentBytes > INGEST_ENVELOPE_BYTES_MAX) throw envelopeRefusal(INGEST_ENVELOPE_BYTES_MAX);
  return { body: await parseInSlices(bytes, split), refusedEvents: split.refused };
}

/** The envelope, then each event not refused, between turns of the event loop. */
async function parseInSlices(bytes: Uint8Array, split: SplitArray): Promise<unknown> {
  const envelope = parseEnvelope(bytes, split);
  const events: unknown[] = [];
  const slices = new TurnSlices();
  const { spans, refused } = split;
  for (let i = 0; i < spans.length; i += 2) {
    await slices.next();
    events.push(refused.has(i / 2) ? null : parseJson(bytes.subarray(spans[i]!, spans[i + 1]!)));
  }
  envelope.events = events;
  return envelope;
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

/**
 * Each event validated as the connection's decision would, in slices between turns of the
 * event loop; an event the structure check refused gets that refusal as its verdict.
 */
export async function validateInSlices(actor: ConnectionActor, events: readonly unknown[], nowMs: number, refusedEvents: ReadonlyMap<number, string> = NONE_REFUSED): Promise<EventVerdict[]> {
  const verdicts: EventVerdict[] = [];
  const slices = new TurnSlices();
  for (const [index, event] of events.entries()) {
    await slices.next();
    const refusal = refusedEvents.get(index);
    verdicts.push(refusal === undefined ? actor.validateIngestEvent(event, nowMs) : structureRefusal(refusal));
  }
  return verdicts;
}

function structureRefusal(problem: string): EventVerdict {
  return { ok: false, error: { code: 'VALIDATION_ERROR', message: 'event failed validation', details: { '(event)': [problem] } } };
}
