// What a job was called with and what it wrote to its log, read from Redis beside its
// facts: the hash's `data` (once per job, when the agent first reads the job) and
// `returnvalue` (for a job reconciled as completed: the stream's `completed` entry carries
// it otherwise), and the lines `job.log` appended to `<prefix>:<queue>:<id>:logs` since
// the agent last looked (the list BullMQ's `Queue.getJobLogs` reads).
//
// Everything is bounded inside Redis, before a byte crosses the network: a value larger
// than VALUE_READ_BYTES_MAX is not read (its size is), and of the new log lines only the
// newest within LOG_LINES_PER_EVENT_MAX and LOG_BYTES_PER_EVENT_MAX are (the others are
// counted, and jobwatch is told how many were left out). BullMQ's `keepLogs` trims a log from its oldest end, which
// moves every line's index: the agent keeps the count it read and a hash of the last line,
// and when the line at that count is no longer that one it looks for it among the newest
// lines, so lines are neither sent twice nor skipped (a run of lines equal to the last one
// read, written after a trim, is the exception: they are taken for lines already read).
import { queueKeys } from './keys.js';
import { LOG_BYTES_PER_EVENT_MAX, LOG_LINE_CHARS, LOG_LINES_PER_EVENT_MAX } from './limits.js';

/** Past this a job's data or return value is not read from Redis: jobwatch is sent its size. */
export const VALUE_READ_BYTES_MAX = 1024 * 1024;
const JOBS_PER_SCRIPT_CALL = 200;
/** One script call stops taking more jobs once its reply holds this many bytes; the rest go in the next call. */
const REPLY_BYTES_BUDGET = 8 * 1024 * 1024;
/** Lines one read takes: one short of what an event may carry, for the line that says how many were left out. */
const LINES_READ_MAX = LOG_LINES_PER_EVENT_MAX - 1;
/** A log line is read up to this many bytes (a character is at most 4 in UTF-8), and then cut to LOG_LINE_CHARS. */
const LOG_LINE_BYTES_READ_MAX = 4 * LOG_LINE_CHARS;

/**
 * @typedef {{queue: string, jobId: string, data: boolean, returnvalue: boolean, logs: boolean, logCount: number, logSha: string}} PayloadRequest
 * @typedef {{dataBytes: number, data: string | null, returnvalueBytes: number, returnvalue: string | null,
 *   logs: {lines: string[], skipped: number, count: number, sha: string} | null}} PayloadRead
 */

/**
 * KEYS: per job its hash and its log list. ARGV: the bounds (a value's bytes, lines read,
 * their bytes, one line's bytes, the reply's bytes), then per job
 * what to read ('d' data, 'r' returnvalue, 'l' logs), the log lines already read and the
 * SHA-1 of the last of them. Per job: {data bytes, data or false, returnvalue bytes,
 * returnvalue or false, log length or -1 when not asked, lines skipped, last line's
 * SHA-1, the new lines...}, for the jobs taken before the reply passed its budget.
 * Read-only.
 */
const READ_PAYLOADS_LUA = `
local bytesMax = tonumber(ARGV[1])
local linesMax = tonumber(ARGV[2])
local logBytesMax = tonumber(ARGV[3])
local lineBytesMax = tonumber(ARGV[4])
local budget = tonumber(ARGV[5])
local used = 0
local out = {}
local function field(key, name)
  local bytes = redis.call('HSTRLEN', key, name)
  if bytes > 0 and bytes <= bytesMax then return bytes, redis.call('HGET', key, name) end
  return bytes, false
end
for index = 1, #KEYS / 2 do
  if used > budget then break end
  local jobKey = KEYS[index * 2 - 1]
  local logKey = KEYS[index * 2]
  local what = ARGV[index * 3 + 3]
  local reply = {0, false, 0, false, -1, 0, ''}
  if string.find(what, 'd', 1, true) then reply[1], reply[2] = field(jobKey, 'data') end
  if string.find(what, 'r', 1, true) then reply[3], reply[4] = field(jobKey, 'returnvalue') end
  if string.find(what, 'l', 1, true) then
    local total = redis.call('LLEN', logKey)
    local from = tonumber(ARGV[index * 3 + 4])
    local sha = ARGV[index * 3 + 5]
    if from > 0 and (from > total or redis.sha1hex(redis.call('LINDEX', logKey, from - 1)) ~= sha) then
      -- trimmed since (keepLogs): the last line read, among the newest lines, says where the new ones begin
      local tail = redis.call('LRANGE', logKey, -linesMax, -1)
      from = total - #tail
      for position = #tail, 1, -1 do
        if redis.sha1hex(tail[position]) == sha then
          from = total - #tail + position
          break
        end
      end
    end
    local skipped = 0
    if total - from > linesMax then
      skipped = total - from - linesMax
      from = total - linesMax
    end
    reply[5] = total
    reply[6] = skipped
    reply[7] = sha
    if total > from then
      local lines = redis.call('LRANGE', logKey, from, total - 1)
      reply[7] = redis.sha1hex(lines[#lines])
      -- the newest lines within the byte bound, each cut to its own
      local first = #lines
      local bytes = 0
      while first >= 1 do
        local size = math.min(#lines[first], lineBytesMax) + 8
        if bytes + size > logBytesMax and first < #lines then break end
        bytes = bytes + size
        first = first - 1
      end
      reply[6] = skipped + first
      for position = first + 1, #lines do reply[#reply + 1] = string.sub(lines[position], 1, lineBytesMax) end
      used = used + bytes
    end
  end
  if reply[2] then used = used + reply[1] end
  if reply[4] then used = used + reply[3] end
  out[index] = reply
end
return out`;

/**
 * Reads what `requests` ask for; returns job key (JobFacts.key) -> what was read.
 * @param {import('ioredis').Redis} redis @param {string} prefix @param {PayloadRequest[]} requests
 * @returns {Promise<Map<string, PayloadRead>>}
 */
export async function readPayloads(redis, prefix, requests) {
  /** @type {Map<string, PayloadRead>} */
  const result = new Map();
  if (requests.length === 0) return result;
  if (typeof (/** @type {any} */ (redis).jobwatchReadPayloads) !== 'function') redis.defineCommand('jobwatchReadPayloads', { lua: READ_PAYLOADS_LUA });
  for (let start = 0; start < requests.length; ) {
    const slice = requests.slice(start, start + JOBS_PER_SCRIPT_CALL);
    const keys = [];
    const args = [String(VALUE_READ_BYTES_MAX), String(LINES_READ_MAX), String(LOG_BYTES_PER_EVENT_MAX), String(LOG_LINE_BYTES_READ_MAX), String(REPLY_BYTES_BUDGET)];
    for (const request of slice) {
      const job = queueKeys(prefix, request.queue).job(request.jobId);
      keys.push(job, `${job}:logs`);
      args.push(`${request.data ? 'd' : ''}${request.returnvalue ? 'r' : ''}${request.logs ? 'l' : ''}-`, String(request.logCount), request.logSha);
    }
    const replies = /** @type {any[][]} */ (await /** @type {any} */ (redis).jobwatchReadPayloads(keys.length, ...keys, ...args));
    const text = (value) => (typeof value === 'string' ? value : null);
    replies.forEach((reply, index) => {
      const request = /** @type {PayloadRequest} */ (slice[index]);
      const total = Number(reply[4] ?? -1);
      result.set(`${request.queue}\u0000${request.jobId}`, {
        dataBytes: Number(reply[0] ?? 0),
        data: text(reply[1]),
        returnvalueBytes: Number(reply[2] ?? 0),
        returnvalue: text(reply[3]),
        logs: total < 0 ? null : { count: total, skipped: Number(reply[5] ?? 0), sha: String(reply[6] ?? ''), lines: reply.slice(7).map(String) },
      });
    });
    start += Math.max(1, replies.length); // the script takes at least one job a call
  }
  return result;
}
