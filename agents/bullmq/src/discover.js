// Finds the BullMQ queues under a prefix by the keys every queue has (its `meta` hash,
// its `id` counter, its `events` stream), with SCAN so a large Redis is never blocked.
// Run again periodically: queues created after the agent started appear on their own.
// A queue whose name is longer than jobwatch keeps (255 characters) is not watched: its
// jobs could not be told from another queue's whose name starts alike. It is returned
// apart, so that the agent says so.
import { QUEUE_CHARS } from './limits.js';

const SUFFIXES = ['meta', 'id', 'events'];
const SCAN_COUNT = 1000;
export const QUEUES_MAX = 1000;

/** @param {string} text */
function globEscape(text) {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

/**
 * Queue names under `prefix`, sorted; `only` (when not empty) narrows them. `tooLong`: the
 * names found that are longer than jobwatch's queue names, not watched.
 * @param {import('ioredis').Redis} redis @param {string} prefix @param {string[]} only
 * @returns {Promise<{queues: string[], tooLong: string[]}>}
 */
export async function discoverQueues(redis, prefix, only = []) {
  const found = new Set();
  for (const suffix of SUFFIXES) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscape(prefix)}:*:${suffix}`, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (const key of keys) {
        const queue = queueOfKey(key, prefix, suffix);
        if (queue !== null) found.add(queue);
      }
    } while (cursor !== '0' && found.size < QUEUES_MAX * 2);
  }
  const names = [...found].filter((name) => only.length === 0 || only.includes(name)).sort();
  return { queues: names.filter((name) => name.length <= QUEUE_CHARS).slice(0, QUEUES_MAX), tooLong: names.filter((name) => name.length > QUEUE_CHARS) };
}

/** The queue of `<prefix>:<queue>:<suffix>`, or null when the key is not one. */
export function queueOfKey(key, prefix, suffix) {
  const head = `${prefix}:`;
  const tail = `:${suffix}`;
  if (!key.startsWith(head) || !key.endsWith(tail) || key.length <= head.length + tail.length) return null;
  const queue = key.slice(head.length, key.length - tail.length);
  // BullMQ refuses ':' in queue names; such a key belongs to something else (a job id ending in "meta", a repeat key).
  return queue.includes(':') ? null : queue;
}
