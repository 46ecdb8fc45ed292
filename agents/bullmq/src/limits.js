// jobwatch's ingest field limits, and the time format it expects. The same figures are in
// agents/ingest-limits.json, which the tests hold these against (and that file against the
// service's ingest schema), so the agents cannot drift from the service or each other.
export const EXTERNAL_ID_CHARS = 512;
export const NAME_CHARS = 1024;
export const QUEUE_CHARS = 255;
export const WORKER_ID_CHARS = 512;
export const HOSTNAME_CHARS = 255;
export const ERROR_CHARS = 10_000;
export const STACKTRACE_CHARS = 50_000;
export const QUEUES_PER_WORKER_MAX = 256;
export const INGEST_EVENTS_MAX = 1000;
export const INGEST_BODY_BYTES_MAX = 5 * 1024 * 1024;
/** Keys the service refuses in extensions and metadata. */
export const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'];

/**
 * What the agent copies from BullMQ into extensions or metadata is cut to these, within
 * the service's 64 KB and 8 levels (bytes with room to spare for another serializer).
 */
export const AGENT_BOUNDS = Object.freeze({
  bytesMax: 60_000,
  depthMax: 8,
  stringChars: 4096,
  keyChars: 128,
  arrayItemsMax: 100,
  objectKeysMax: 100,
});
/**
 * A job's data, return value and log lines are cut to these, within what jobwatch keeps of
 * them (64 KiB of arguments and of a result, 16 KiB of a progress object, 1,000 lines an
 * event, lines of 16,384 characters): past them jobwatch would keep a cut head that is no
 * longer JSON. A progress object is also free-form JSON to jobwatch (8 levels), so it is
 * bounded with AGENT_BOUNDS and PROGRESS_BYTES_MAX.
 */
export const PAYLOAD_BOUNDS = Object.freeze({
  bytesMax: 60_000,
  depthMax: 16,
  stringChars: 16_384,
  keyChars: 256,
  arrayItemsMax: 1000,
  objectKeysMax: 1000,
});
export const PROGRESS_BYTES_MAX = 15_000;
export const LOG_LINES_PER_EVENT_MAX = 1000;
export const LOG_BYTES_PER_EVENT_MAX = 200_000;
export const LOG_LINE_CHARS = 16_384;
/** Ends every value the agent shortened, so a reader sees that something was left out. */
export const TRUNCATED_MARK = '\u2026[truncated]';

/** The mark with what was left out: `…[truncated: 3 more items]`. @param {string} detail */
export function truncatedMark(detail) {
  return `${TRUNCATED_MARK.slice(0, -1)}: ${detail}]`;
}

/**
 * Cuts text to `limit` UTF-16 code units (JavaScript's length, as the service counts),
 * never leaving half a surrogate pair.
 * @param {string} text @param {number} limit
 */
export function cut(text, limit) {
  if (text.length <= limit) return text;
  let head = text.slice(0, limit);
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
  return head;
}

/**
 * `text` within `limit` UTF-16 units; when it was longer, cut and ended with TRUNCATED_MARK
 * (just cut where the limit is too short to hold the mark).
 * @param {string} text @param {number} limit
 */
export function cutMarked(text, limit) {
  if (text.length <= limit) return text;
  if (limit <= TRUNCATED_MARK.length) return cut(text, limit);
  return cut(text, limit - TRUNCATED_MARK.length) + TRUNCATED_MARK;
}

const isoCache = new Map();
/** @param {number} ms epoch milliseconds; recent values are cached: events of one batch share their milliseconds */
export function isoFromMs(ms) {
  let text = isoCache.get(ms);
  if (text === undefined) {
    if (isoCache.size >= 4096) isoCache.clear();
    text = new Date(ms).toISOString();
    isoCache.set(ms, text);
  }
  return text;
}

/** Milliseconds of a Redis stream id `<ms>-<seq>` (Redis's own clock). @param {string} id */
export function msOfStreamId(id) {
  return Number(id.slice(0, id.indexOf('-')));
}

/** Stream ids compared as Redis orders them (milliseconds, then sequence; both stay far below 2^53). @param {string} a @param {string} b */
export function compareStreamIds(a, b) {
  const aDash = a.indexOf('-');
  const bDash = b.indexOf('-');
  const aMs = Number(aDash < 0 ? a : a.slice(0, aDash));
  const bMs = Number(bDash < 0 ? b : b.slice(0, bDash));
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  const aSeq = aDash < 0 ? 0 : Number(a.slice(aDash + 1));
  const bSeq = bDash < 0 ? 0 : Number(b.slice(bDash + 1));
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}
