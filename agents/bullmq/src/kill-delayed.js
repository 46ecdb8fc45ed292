// "Kill" of a job waiting to retry: BullMQ keeps such a job in its delayed set until its
// backoff ends, and has no call that fails a job that is not running (its moveToFailed
// needs the worker's lock). This script does what BullMQ does when a job's attempts are
// exhausted, in one step: out of the delayed set, into the failed set with its finish time,
// and a `failed` entry on the queue's event stream (its error, the last attempt's, kept).
// A job no longer delayed (it started meanwhile, or was removed) is left as it is.

/** KEYS: delayed, failed, job hash, events, meta. ARGV: job id, time (ms). Returns 1, or 0 when the job is not delayed, -1 when its hash is gone. */
const KILL_DELAYED_LUA = `
if redis.call("ZSCORE", KEYS[1], ARGV[1]) == false then return 0 end
if redis.call("EXISTS", KEYS[3]) == 0 then return -1 end
redis.call("ZREM", KEYS[1], ARGV[1])
redis.call("ZADD", KEYS[2], ARGV[2], ARGV[1])
redis.call("HSET", KEYS[3], "finishedOn", ARGV[2])
local reason = redis.call("HGET", KEYS[3], "failedReason") or ""
local maxEvents = redis.call("HGET", KEYS[5], "opts.maxLenEvents") or 10000
redis.call("XADD", KEYS[4], "MAXLEN", "~", maxEvents, "*", "event", "failed", "jobId", ARGV[1], "failedReason", reason, "prev", "delayed")
return 1
`;

/**
 * Defines the command on the connection once; resolves to the script's answer.
 * @param {import('ioredis').Redis} redis @param {ReturnType<typeof import('./keys.js').queueKeys>} keys @param {string} jobId
 * @returns {Promise<number>}
 */
export async function killDelayed(redis, keys, jobId) {
  const client = /** @type {any} */ (redis);
  if (typeof client.jobwatchKillDelayed !== 'function') redis.defineCommand('jobwatchKillDelayed', { numberOfKeys: 5, lua: KILL_DELAYED_LUA });
  return Number(await client.jobwatchKillDelayed(keys.delayed, keys.failed, keys.job(jobId), keys.events, keys.meta, jobId, String(Date.now())));
}
