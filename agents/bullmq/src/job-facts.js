// What the agent knows of each job beyond its events: read from the job's hash when the
// job is added, starts, or fails (with removeOnComplete the hash is gone by the time the
// job completes, so what was read earlier is kept here, in a bounded least-recently-used map).
import { queueKeys } from './keys.js';
import { STACKTRACE_CHARS } from './limits.js';

/** Hash fields read with HMGET: never `data` or `returnvalue`, which can be large. */
export const FACT_FIELDS = ['name', 'timestamp', 'opts', 'delay', 'priority', 'atm', 'ats', 'processedOn', 'finishedOn', 'pb', 'processedBy', 'failedReason', 'stacktrace', 'progress', 'parentKey', 'rjk', 'stc'];
export const JOBS_REMEMBERED_MAX = 200_000;
/** The newest stack traces kept of a job (one per failed attempt), so an earlier attempt read late still gets its own. */
export const TRACES_KEPT = 10;

/**
 * @typedef {{name?: string, createdAtMs?: number, attempts?: number, delayMs?: number, priority?: number, attemptsMade?: number,
 *   attemptsStarted?: number, processedOnMs?: number, finishedOnMs?: number, processedBy?: string, failedReason?: string,
 *   stacktrace?: string, stacktraces?: string[], tracesDropped?: number, progress?: unknown, parentKey?: string, schedulerId?: string, stalledCount?: number,
 *   addedAtMs?: number, etaMs?: number, startedAtMs?: number, attempt?: number, exists?: boolean,
 *   native?: string, nextAttempt?: number,
 *   dataRead?: boolean, logCount?: number, logSha?: string}} Facts (the last three: what job-payloads.js read of the job so far)
 */

/** Facts from an HMGET reply in FACT_FIELDS order (null when the hash does not exist). @param {(string | null | false)[]} values */
export function factsFromHash(values) {
  if (values.length === 0 || values.every((value) => value === null || value === false)) return null;
  /** @type {Record<string, string | null>} */
  const raw = {};
  FACT_FIELDS.forEach((field, index) => {
    const value = values[index];
    raw[field] = typeof value === 'string' ? value : null; // a missing field is a Lua false
  });
  /** @type {Facts} */
  const facts = { exists: true };
  if (raw.name) facts.name = raw.name;
  const int = (text) => (text !== null && /^-?\d+$/.test(text) ? Number(text) : undefined);
  const set = (key, value) => {
    if (value !== undefined) facts[key] = value;
  };
  set('createdAtMs', int(raw.timestamp));
  set('delayMs', int(raw.delay));
  set('priority', int(raw.priority));
  set('attemptsMade', int(raw.atm));
  set('attemptsStarted', int(raw.ats));
  set('processedOnMs', int(raw.processedOn));
  set('finishedOnMs', int(raw.finishedOn));
  set('stalledCount', int(raw.stc));
  // bullmq 6 stores the worker's name as `pb`; some older versions as `processedBy`
  const processedBy = raw.pb || raw.processedBy;
  if (processedBy) facts.processedBy = processedBy;
  if (raw.failedReason) facts.failedReason = raw.failedReason;
  if (raw.parentKey) facts.parentKey = raw.parentKey;
  if (raw.rjk) facts.schedulerId = raw.rjk;
  if (raw.opts) {
    try {
      const opts = JSON.parse(raw.opts);
      if (Number.isInteger(opts.attempts)) facts.attempts = opts.attempts;
    } catch {
      // options the agent cannot read: no max retries
    }
  }
  if (raw.stacktrace) {
    try {
      const traces = JSON.parse(raw.stacktrace);
      if (Array.isArray(traces) && traces.length > 0) {
        facts.stacktrace = String(traces[traces.length - 1]);
        // one per failed attempt, oldest first (as far as the app's stackTraceLimit keeps them)
        facts.stacktraces = traces.slice(-TRACES_KEPT).map((trace) => String(trace).slice(0, STACKTRACE_CHARS));
        facts.tracesDropped = traces.length - facts.stacktraces.length;
      }
    } catch {
      facts.stacktrace = raw.stacktrace;
    }
  }
  if (raw.progress !== null) {
    try {
      facts.progress = JSON.parse(raw.progress);
    } catch {
      facts.progress = raw.progress;
    }
  }
  return facts;
}

export class JobFacts {
  constructor(max = JOBS_REMEMBERED_MAX) {
    this.max = max;
    /** @type {Map<string, Facts>} */
    this.known = new Map();
  }

  static key(queue, jobId) {
    return `${queue}\u0000${jobId}`;
  }

  /** @returns {Facts} */
  get(queue, jobId) {
    return this.known.get(JobFacts.key(queue, jobId)) ?? {};
  }

  /** Merges what was learned (undefined values leave the old ones). @param {Facts} learned */
  learn(queue, jobId, learned) {
    const key = JobFacts.key(queue, jobId);
    let known = this.known.get(key);
    if (known === undefined) {
      known = {};
      const oldest = this.known.keys().next();
      if (this.known.size >= this.max && !oldest.done) this.known.delete(oldest.value);
    } else {
      this.known.delete(key); // re-inserted below: the map's order is least recently used first
    }
    for (const field in learned) if (learned[field] !== undefined) known[field] = learned[field];
    this.known.set(key, known);
    return known;
  }

  has(queue, jobId) {
    return this.known.has(JobFacts.key(queue, jobId));
  }

  forget(queue, jobId) {
    this.known.delete(JobFacts.key(queue, jobId));
  }

  /**
   * Reads many jobs' hashes with one read-only script call per 500 jobs (one HMGET per job
   * inside Redis: far cheaper for the agent than a command per job); returns a map
   * job key -> facts (null when the hash is gone).
   * @param {import('ioredis').Redis} redis @param {string} prefix @param {Array<{queue: string, jobId: string}>} jobs
   */
  static async read(redis, prefix, jobs) {
    /** @type {Map<string, Facts | null>} */
    const result = new Map();
    defineReadScript(redis);
    for (let start = 0; start < jobs.length; start += JOBS_PER_SCRIPT_CALL) {
      const slice = jobs.slice(start, start + JOBS_PER_SCRIPT_CALL);
      const keys = slice.map(({ queue, jobId }) => queueKeys(prefix, queue).job(jobId));
      const replies = /** @type {Array<(string | null)[]>} */ (await /** @type {any} */ (redis).jobwatchReadJobs(keys.length, ...keys, ...FACT_FIELDS));
      slice.forEach(({ queue, jobId }, index) => {
        result.set(JobFacts.key(queue, jobId), factsFromHash(replies[index] ?? []));
      });
    }
    return result;
  }
}

const JOBS_PER_SCRIPT_CALL = 500;
/** Only HMGET: the script reads, it never writes. */
const READ_JOBS_LUA = `
local out = {}
for index, key in ipairs(KEYS) do
  out[index] = redis.call('HMGET', key, unpack(ARGV))
end
return out`;

/** @param {import('ioredis').Redis} redis */
function defineReadScript(redis) {
  if (typeof (/** @type {any} */ (redis).jobwatchReadJobs) !== 'function') redis.defineCommand('jobwatchReadJobs', { lua: READ_JOBS_LUA });
}
