// When the agent cannot read a queue's history from its event stream (first start, or the
// stream was trimmed past the checkpoint while the agent was away), it reads what Redis
// holds now instead: the newest jobs of each state set, each sent in its current state,
// timed by the job's own timestamps, with its data, a completed job's return value and its
// log lines as Redis keeps them. The caller logs what was reconciled.
import { JobFacts } from './job-facts.js';
import { readPayloads } from './job-payloads.js';
import { queueKeys } from './keys.js';

/** state set -> [unified state, native state, how to read the newest ids] */
const SETS = [
  ['wait', 'queued', 'waiting', 'list'],
  ['paused', 'queued', 'paused', 'list'],
  ['prioritized', 'queued', 'prioritized', 'zset-asc'],
  ['waiting-children', 'queued', 'waiting-children', 'zset-asc'],
  ['delayed', 'scheduled', 'delayed', 'zset-asc'],
  ['active', 'active', 'active', 'list'],
  ['completed', 'completed', 'completed', 'zset-desc'],
  ['failed', 'failed', 'failed', 'zset-desc'],
];

/**
 * @param {import('ioredis').Redis} redis @param {string} prefix @param {string} queue @param {number} perSetMax
 * @param {import('./normalize.js').Normalizer} normalizer
 * @returns {Promise<{events: object[], counts: Record<string, number>}>}
 */
export async function reconcileQueue(redis, prefix, queue, perSetMax, normalizer) {
  const keys = queueKeys(prefix, queue);
  /** @type {Record<string, number>} */
  const counts = {};
  if (perSetMax === 0) return { events: [], counts };
  const pipeline = redis.pipeline();
  for (const [set, , , how] of SETS) {
    const key = `${keys.base}${set}`;
    // The newest: a list is pushed on the left (LPUSH) by BullMQ, a finished set is scored by finish time.
    if (how === 'list') pipeline.lrange(key, 0, perSetMax - 1);
    else if (how === 'zset-asc') pipeline.zrange(key, 0, perSetMax - 1);
    else pipeline.zrevrange(key, 0, perSetMax - 1);
  }
  const replies = (await pipeline.exec()) ?? [];
  /** @type {Array<{queue: string, jobId: string, set: string, state: string, native: string}>} */
  const jobs = [];
  const seen = new Set();
  SETS.forEach(([set, state, native], index) => {
    const [error, ids] = replies[index] ?? [null, []];
    if (error) return; // a key of another type: not BullMQ's
    for (const jobId of /** @type {string[]} */ (ids)) {
      if (seen.has(jobId) || jobId.startsWith('0:')) continue; // a delay marker of older BullMQ versions
      seen.add(jobId);
      jobs.push({ queue, jobId, set, state, native });
    }
  });
  const facts = await JobFacts.read(redis, prefix, jobs);
  const payloads = await readPayloads(
    redis,
    prefix,
    jobs.map(({ jobId, state }) => {
      const known = normalizer.facts.get(queue, jobId);
      return { queue, jobId, data: !known.dataRead, returnvalue: state === 'completed', logs: true, logCount: known.logCount ?? 0, logSha: known.logSha ?? '' };
    }),
  );
  normalizer.takeRead(queue, payloads);
  const events = [];
  for (const job of jobs) {
    const found = facts.get(JobFacts.key(queue, job.jobId));
    if (!found) continue; // removed since the set was read
    const known = normalizer.facts.learn(queue, job.jobId, { ...found, native: job.native });
    const atMs = timeOf(job.state, found);
    counts[job.set] = (counts[job.set] ?? 0) + 1;
    const change = { state: job.state, native: job.native, extensions: { reconciled: true } };
    if (job.state === 'failed') change.error = found.failedReason ?? '';
    if (job.state === 'scheduled' && found.createdAtMs !== undefined && found.delayMs) known.etaMs = found.createdAtMs + found.delayMs;
    if (job.state === 'active') known.startedAtMs = found.processedOnMs;
    events.push(normalizer.jobEvent(queue, job.jobId, atMs, change, job.state === 'active' ? 'active' : 'reconciled'));
  }
  normalizer.read.clear();
  return { events, counts };
}

/** The moment a job entered its current state, from its hash (the producer's and worker's clocks). */
function timeOf(state, facts) {
  if ((state === 'completed' || state === 'failed') && facts.finishedOnMs !== undefined) return facts.finishedOnMs;
  if (state === 'active' && facts.processedOnMs !== undefined) return facts.processedOnMs;
  return facts.createdAtMs ?? Date.now();
}
