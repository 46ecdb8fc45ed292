// Free-form values copied from BullMQ (a job's progress, its options, a worker's client
// name) made to fit what jobwatch takes in extensions and metadata. jobwatch refuses an
// event whose extensions nest deeper than 8 levels, pass 64 KB or hold a prototype key,
// and a value deep enough refuses the whole request: one job's progress must never cost
// other jobs' events. So every string is cut, every array and object bounded in count,
// anything nested too deep replaced, and the whole held under the byte bound by
// shortening its largest values; each cut is marked, so a reader sees what was left out.
//
// The rule is the same in the three agents (agents/bounding-cases.json holds cases each
// agent's tests run), so jobwatch shows a value cut alike whichever agent sent it.
import { AGENT_BOUNDS, cutMarked, FORBIDDEN_KEYS, TRUNCATED_MARK, truncatedMark } from './limits.js';

const FORBIDDEN = new Set(FORBIDDEN_KEYS);

/** @typedef {typeof AGENT_BOUNDS} Bounds */

/**
 * A copy of `value` (an object; anything else gives {}) within `bounds`.
 * @param {unknown} value @param {Bounds} [bounds]
 * @returns {Record<string, unknown>}
 */
export function boundJson(value, bounds = AGENT_BOUNDS) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const size = { most: 0 };
  const bounded = /** @type {Record<string, unknown>} */ (boundValue(value, 1, bounds, size));
  // the usual extensions are far below the bound: no need to serialize them to know it
  return size.most <= bounds.bytesMax ? bounded : fitBytes(bounded, bounds);
}

/**
 * A single value as it would sit inside an object at `depth` (the object itself being
 * level 1). `size.most` grows by at most what the result takes serialized (a string's
 * UTF-16 unit is at most 6 bytes, escaped; a number at most 24 characters).
 */
export function boundValue(value, depth, bounds = AGENT_BOUNDS, size = { most: 0 }) {
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
      return boundValue(item, depth + 1, bounds, size);
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
    out[name] = boundValue(item, depth + 1, bounds, size);
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

function bytesOf(value) {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

