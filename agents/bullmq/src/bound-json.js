// Free-form values copied from BullMQ (a job's progress, its options, a worker's client
// name) made to fit what jobwatch takes in extensions and metadata. jobwatch refuses an
// event whose extensions nest deeper than 8 levels, pass 64 KB or hold a prototype key,
// and a value deep enough refuses the whole request: one job's progress must never cost
// other jobs' events. So every string is cut, every array and object bounded in count,
// anything nested too deep replaced, and the whole held under the byte bound by
// shortening its largest values; each cut is marked, so a reader sees what was left out.
//
// A job's data, return value and progress are bounded the same way (boundPayload), with
// larger bounds and any JSON at the top, and their secret-looking keys masked on the way
// (redaction.js): the walk that bounds them is the one that masks them.
//
// The rule is the same in the three agents (agents/bounding-cases.json holds cases each
// agent's tests run), so jobwatch shows a value cut alike whichever agent sent it.
import { AGENT_BOUNDS, cutMarked, FORBIDDEN_KEYS, PAYLOAD_BOUNDS, TRUNCATED_MARK, truncatedMark } from './limits.js';
import { REDACTED } from './redaction.js';

const FORBIDDEN = new Set(FORBIDDEN_KEYS);

/** @typedef {{bytesMax: number, depthMax: number, stringChars: number, keyChars: number, arrayItemsMax: number, objectKeysMax: number}} Bounds */
/** @typedef {import('./redaction.js').Redactor | null} MaybeRedactor */

/**
 * A copy of `value` (an object; anything else gives {}) within `bounds`, the values of keys
 * `redactor` matches masked.
 * @param {unknown} value @param {Bounds} [bounds] @param {MaybeRedactor} [redactor]
 * @returns {Record<string, unknown>}
 */
export function boundJson(value, bounds = AGENT_BOUNDS, redactor = null) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const size = { most: 0 };
  const bounded = /** @type {Record<string, unknown>} */ (boundValue(value, 1, bounds, size, redactor));
  // the usual extensions are far below the bound: no need to serialize them to know it
  return size.most <= bounds.bytesMax ? bounded : fitBytes(bounded, bounds);
}

/**
 * A job's data, return value or progress (any JSON) within `bounds`, the values of keys
 * `redactor` matches masked. Past `bytesMax` the largest value gives way first, as in
 * boundJson, except that it is shortened rather than replaced where it can be (a string
 * cut, an object or array shortened inside by the same rule), so one large field of a
 * job's data costs only what it must of that field, and nothing of its neighbours.
 * @param {unknown} value @param {Bounds} [bounds] @param {MaybeRedactor} [redactor]
 */
export function boundPayload(value, bounds = PAYLOAD_BOUNDS, redactor = null) {
  const size = { most: 0 };
  const bounded = boundValue(value, 1, bounds, size, redactor);
  if (size.most <= bounds.bytesMax) return bounded;
  const bytes = bytesOf(bounded);
  return bytes <= bounds.bytesMax ? bounded : (shrink(bounded, bytes, bounds.bytesMax) ?? truncatedMark(`${bytes} bytes`));
}

/**
 * A single value as it would sit inside an object at `depth` (the object itself being
 * level 1). `size.most` grows by at most what the result takes serialized (a string's
 * UTF-16 unit is at most 6 bytes, escaped; a number at most 24 characters).
 * @param {unknown} value @param {number} depth @param {Bounds} [bounds] @param {{ most: number }} [size] @param {MaybeRedactor} [redactor]
 * @returns {unknown}
 */
export function boundValue(value, depth, bounds = AGENT_BOUNDS, size = { most: 0 }, redactor = null) {
  if (value === null || typeof value === 'boolean') {
    size.most += 5;
    return value;
  }
  if (typeof value === 'number') {
    size.most += 24;
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string' || (typeof value !== 'object' && value !== undefined && typeof value !== 'function')) {
    const text = cutMarked(String(value), bounds.stringChars);
    size.most += 2 + 6 * text.length;
    return text;
  }
  if (typeof value !== 'object') {
    size.most += 4;
    return null;
  }
  if (depth > bounds.depthMax) {
    size.most += 300; // a mark, with room to spare
    return truncatedMark(`deeper than ${bounds.depthMax} levels`);
  }
  size.most += 2;
  if (Array.isArray(value)) {
    const kept = value.slice(0, bounds.arrayItemsMax).map((item) => {
      size.most += 1;
      return boundValue(item, depth + 1, bounds, size, redactor);
    });
    if (value.length > bounds.arrayItemsMax) {
      kept.push(truncatedMark(`${value.length - bounds.arrayItemsMax} more items`));
      size.most += 300; // a mark, with room to spare
    }
    return kept;
  }
  /** @type {Record<string, unknown>} */
  const out = {};
  let kept = 0;
  let left = 0;
  for (const [key, item] of Object.entries(value)) {
    if (FORBIDDEN.has(key) || kept >= bounds.objectKeysMax) {
      left += 1;
      continue;
    }
    kept += 1;
    const name = cutMarked(key, bounds.keyChars);
    size.most += 4 + 6 * name.length;
    if (redactor !== null && redactor.matches(key)) {
      out[name] = REDACTED;
      size.most += 2 + REDACTED.length;
    } else {
      out[name] = boundValue(item, depth + 1, bounds, size, redactor);
    }
  }
  if (left > 0) {
    out[TRUNCATED_MARK] = `${left} keys left out`;
    size.most += 300; // a mark, with room to spare
  }
  return out;
}

/** Past `bytesMax` serialized, the largest values (top level) are replaced by a mark saying their size, largest first. */
function fitBytes(object, bounds) {
  let size = bytesOf(object);
  if (size <= bounds.bytesMax) return object;
  const bySize = Object.keys(object)
    .map((key, index) => ({ key, index, bytes: bytesOf(object[key]) }))
    .sort((a, b) => b.bytes - a.bytes || a.index - b.index);
  for (const { key, bytes } of bySize) {
    const mark = truncatedMark(`${bytes} bytes`);
    const markBytes = bytesOf(mark);
    if (bytes <= markBytes) continue;
    object[key] = mark;
    size -= bytes - markBytes;
    if (size <= bounds.bytesMax) return object;
  }
  return { [TRUNCATED_MARK]: `${size} bytes left out` };
}

/**
 * `value` (serialized in `bytes`, more than `budget`) brought within `budget`, or undefined
 * when nothing can be: a string is cut (the longest head that fits, marked); an object or
 * array gives up its largest values first, each shortened by this same rule when it can
 * give up the whole excess, else replaced by a mark of its size; what still does not fit
 * becomes one such mark.
 * @param {unknown} value @param {number} bytes @param {number} budget
 * @returns {unknown}
 */
function shrink(value, bytes, budget) {
  if (typeof value === 'string') {
    const head = headWithin(value, budget);
    if (head !== undefined) return head;
  } else if (value !== null && typeof value === 'object') {
    const container = /** @type {Record<string, unknown>} */ (value);
    const bySize = Object.keys(container)
      .map((key, index) => ({ key, index, bytes: bytesOf(container[key]) }))
      .sort((a, b) => b.bytes - a.bytes || a.index - b.index);
    let size = bytes;
    for (const { key, bytes: itemBytes } of bySize) {
      const room = itemBytes - (size - budget);
      let replacement = room > 0 ? shrink(container[key], itemBytes, room) : undefined;
      if (replacement === undefined) {
        replacement = truncatedMark(`${itemBytes} bytes`);
        if (bytesOf(replacement) >= itemBytes) continue;
      }
      container[key] = replacement;
      size -= itemBytes - bytesOf(replacement);
      if (size <= budget) return container;
    }
  }
  const mark = truncatedMark(`${bytes} bytes`);
  return bytesOf(mark) <= budget ? mark : undefined;
}

/**
 * The longest head of `text`, marked as cut, whose JSON fits `budget` bytes (a binary
 * search: a longer head is never smaller); undefined when not even one character does.
 * @param {string} text @param {number} budget
 */
function headWithin(text, budget) {
  let low = TRUNCATED_MARK.length + 1;
  let high = text.length - 1;
  if (high < low || bytesOf(cutMarked(text, low)) > budget) return undefined;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (bytesOf(cutMarked(text, middle)) <= budget) low = middle;
    else high = middle - 1;
  }
  return cutMarked(text, low);
}

function bytesOf(value) {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

