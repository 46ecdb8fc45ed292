// The commands on a queue, carried out through bullmq's Queue API (on the agent's Queue,
// built with `skipMetasUpdate`): pause and resume, clean, retry every failed job, and the
// queue's global concurrency. Each answers an outcome with what BullMQ reports in `details`
// (how many jobs were removed or retried); none is `done` unless BullMQ did it.
//
// A clean of waiting jobs removes them one by one with BullMQ's remove (its `removed`
// events make them cancelled in jobwatch); BullMQ's drain would remove them silently, and
// jobwatch would show them waiting for ever.
import { hasGlobalConcurrency, BULLMQ_VERSION } from './capabilities.js';

/** Jobs one clean removes at most, in batches: a larger backlog takes another clean. */
export const CLEAN_MAX = 100_000;
const CLEAN_BATCH = 1000;
const CLEANABLE = new Set(['completed', 'failed']);

/**
 * The command's params as this agent reads them, or why they are not valid (jobwatch
 * checks them too; an agent does not build a call from anything it did not check).
 * @param {string} type @param {unknown} params
 * @returns {{params: any} | {refused: string}}
 */
export function queueParamsOf(type, params) {
  const given = params && typeof params === 'object' ? /** @type {Record<string, unknown>} */ (params) : null;
  if (type === 'queue.clean') {
    if (given?.mode === 'waiting') return { params: { mode: 'waiting' } };
    if (given?.mode !== 'finished') return { refused: 'a clean names its mode: finished or waiting' };
    const { olderThanMs, states } = given;
    if (typeof olderThanMs !== 'number' || !Number.isSafeInteger(olderThanMs) || olderThanMs < 0) return { refused: 'a clean of finished jobs needs olderThanMs, a whole number of milliseconds' };
    if (!Array.isArray(states) || states.length === 0 || !states.every((state) => CLEANABLE.has(state)) || new Set(states).size !== states.length) {
      return { refused: 'a clean of finished jobs names its states: completed, failed' };
    }
    return { params: { mode: 'finished', olderThanMs, states } };
  }
  if (type === 'queue.concurrency') {
    const concurrency = given?.concurrency;
    if (concurrency === null) return { params: { concurrency: null } };
    if (typeof concurrency !== 'number' || !Number.isSafeInteger(concurrency) || concurrency < 1) return { refused: 'concurrency is a whole number from 1, or null to clear it' };
    return { params: { concurrency } };
  }
  return { params: undefined };
}

/**
 * @param {string} type @param {import('bullmq').Queue} queue @param {any} params as queueParamsOf read them
 * @param {{redis: import('ioredis').Redis, keys: ReturnType<typeof import('./keys.js').queueKeys>}} where
 * @returns {Promise<{status: 'done', details?: Record<string, number | boolean>} | {status: 'failed' | 'unsupported', reason: string}>}
 */
export async function runQueueCommand(type, queue, params, where) {
  switch (type) {
    case 'queue.pause': {
      const already = await queue.isPaused();
      if (!already) await queue.pause();
      return { status: 'done', details: { paused: true, alreadyPaused: already } };
    }
    case 'queue.resume': {
      const was = await queue.isPaused();
      if (was) await queue.resume();
      return { status: 'done', details: { paused: false, wasPaused: was } };
    }
    case 'queue.clean':
      return params.mode === 'waiting' ? cleanWaiting(queue, where) : cleanFinished(queue, params);
    case 'queue.retry_failed': {
      const at = Date.now();
      const before = Number(await where.redis.zcount(where.keys.failed, '-inf', String(at)));
      await queue.retryJobs({ state: 'failed', count: CLEAN_BATCH, timestamp: at });
      const after = Number(await where.redis.zcount(where.keys.failed, '-inf', String(at)));
      return { status: 'done', details: { retried: Math.max(0, before - after) } };
    }
    case 'queue.concurrency':
      if (!hasGlobalConcurrency()) return { status: 'unsupported', reason: `bullmq ${BULLMQ_VERSION} has no global concurrency` };
      if (params.concurrency === null) await queue.removeGlobalConcurrency();
      else await queue.setGlobalConcurrency(params.concurrency);
      return { status: 'done', details: { concurrency: params.concurrency } };
    default:
      throw new Error(`not a queue command: ${type}`);
  }
}

/** BullMQ's clean per state, in batches, up to CLEAN_MAX jobs; `more`: it stopped there. */
async function cleanFinished(queue, { olderThanMs, states }) {
  /** @type {Record<string, number | boolean>} */
  const details = { removed: 0 };
  for (const state of states) {
    let removed = 0;
    for (;;) {
      const batch = await queue.clean(olderThanMs, CLEAN_BATCH, state);
      removed += batch.length;
      if (batch.length < CLEAN_BATCH) break;
      if (/** @type {number} */ (details.removed) + removed >= CLEAN_MAX) {
        details.more = true;
        break;
      }
    }
    details[state] = removed;
    details.removed = /** @type {number} */ (details.removed) + removed;
    if (details.more) break;
  }
  return { status: /** @type {'done'} */ ('done'), details };
}

/** Every waiting job (waiting, prioritized, paused), removed with BullMQ's remove; one that started or went meanwhile is counted as left. */
async function cleanWaiting(queue, { redis, keys }) {
  let removed = 0;
  let started = 0;
  const seen = new Set();
  while (removed + started < CLEAN_MAX) {
    const [waiting, paused, prioritized] = await Promise.all([redis.lrange(keys.wait, -CLEAN_BATCH, -1), redis.lrange(keys.paused, -CLEAN_BATCH, -1), redis.zrange(keys.prioritized, 0, CLEAN_BATCH - 1)]);
    const ids = [...waiting, ...paused, ...prioritized].filter((id) => !seen.has(id));
    if (ids.length === 0) break;
    for (const id of ids) {
      seen.add(id);
      if ((await queue.remove(id, { removeChildren: false })) === 1) removed++;
      else started++;
    }
  }
  const details = { removed, left: started };
  return { status: /** @type {'done'} */ ('done'), details: removed + started >= CLEAN_MAX ? { ...details, more: true } : details };
}
