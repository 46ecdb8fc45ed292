// Revoke and retry from jobwatch, carried out in BullMQ and acknowledged with an outcome.
//
// Jobs are handled through bullmq's own Job API (its Lua scripts keep the queue's sets,
// the job's hash and the event stream consistent), on a Queue built with
// `skipMetasUpdate`: it writes nothing to the queue's metadata, unlike a default Queue,
// which rewrites `opts.maxLenEvents`. Revoke removes a waiting, prioritized or delayed
// job. A running job cannot be stopped from outside: its worker holds the lock and BullMQ
// offers no cancel for another process's job, so the command is acknowledged `failed`
// with that reason. Retry moves a failed job back to waiting. When Redis cannot be
// reached the command stays unacknowledged and comes back at the next poll.
//
// A command names its job by what jobwatch was sent, and anyone holding the connection's
// API key can send jobwatch anything: a command is checked before any Redis key is built
// from it. The agent acts only in a queue it watches (found under its prefix, within
// `--queues`), on a job BullMQ lists in one of that queue's states; anything else is
// acknowledged `failed` with the reason, and nothing in Redis is touched.
import { Job, Queue } from 'bullmq';
import { errorText, NetworkError } from './http-client.js';
import { EXTERNAL_ID_CHARS, QUEUE_CHARS, TRUNCATED_MARK } from './limits.js';
import { logger } from './log.js';

const log = logger('commands');
const COMMANDS_PER_POLL = 100;
const REASON_CHARS = 1000;
// The service caps an ack body at 128 KiB: 20 outcomes with 1,000-character reasons fit in one request.
const ACK_OUTCOMES_PER_REQUEST = 20;
const UNACKED_OUTCOMES_MAX = 10_000;
const REVOCABLE = new Set(['waiting', 'prioritized', 'delayed', 'paused']);
export const RUNNING_REASON =
  'a running BullMQ job cannot be cancelled from outside its worker (the worker holds the job lock and BullMQ has no remote cancel); it runs to its end';

class RedisUnavailable extends Error {}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The BullMQ queue and job id a command names (its externalId is `<queue>:<job id>`), or
 * why it names none this agent could act on.
 * @returns {{queue: string, jobId: string} | {refused: string}}
 */
export function targetOf(command) {
  const { externalId } = command;
  if (typeof externalId !== 'string' || externalId === '' || externalId.length > EXTERNAL_ID_CHARS || CONTROL.test(externalId)) {
    return { refused: `not a BullMQ job id of this agent: ${JSON.stringify(String(externalId ?? '')).slice(0, 200)}` };
  }
  if (externalId.length === EXTERNAL_ID_CHARS && externalId.endsWith(TRUNCATED_MARK)) {
    return { refused: `the job's id was cut to ${EXTERNAL_ID_CHARS} characters when it was sent to jobwatch: the agent cannot tell which BullMQ job it is` };
  }
  const named = command.queue ?? null;
  if (named !== null && (typeof named !== 'string' || named === '' || named.length > QUEUE_CHARS || named.includes(':') || CONTROL.test(named))) {
    return { refused: `not a BullMQ queue name: ${JSON.stringify(String(named)).slice(0, 300)}` };
  }
  const queue = named ?? externalId.slice(0, Math.max(0, externalId.indexOf(':')));
  const jobId = externalId.slice(queue.length + 1);
  if (queue === '' || !externalId.startsWith(`${queue}:`) || jobId === '') {
    return { refused: `not a BullMQ job id of this agent: ${JSON.stringify(externalId).slice(0, 200)}${named === null ? '' : ` in queue ${JSON.stringify(named)}`}` };
  }
  return { queue, jobId };
}

export class CommandRunner {
  /**
   * @param {import('ioredis').Redis} redis @param {string} prefix @param {import('./http-client.js').HttpClient} client
   * @param {(queue: string) => boolean} watches whether the agent watches a queue now
   * @param {string} scope what the agent watches, for the reasons it gives
   */
  constructor(redis, prefix, client, watches, scope) {
    Object.assign(this, { redis, prefix, client, watches, scope });
    /** @type {Map<string, Queue>} */
    this.queues = new Map();
    /** carried out but not yet acknowledged (the ack failed): not carried out twice */
    this.unacked = new Map();
    this.unreachable = false;
  }

  queue(name) {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.redis, prefix: this.prefix, skipMetasUpdate: true, skipVersionCheck: true });
      queue.on('error', () => {}); // reported through the calls that fail
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Fetches pending commands, carries them out and acknowledges them; returns how many were acknowledged. */
  async poll() {
    let response;
    try {
      response = await this.client.get(`/api/agent/commands?limit=${COMMANDS_PER_POLL}`);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      if (!this.unreachable) log.warn(`jobwatch unreachable (${error.message}); polling on`);
      this.unreachable = true;
      return 0;
    }
    this.unreachable = false;
    if (response.status !== 200) {
      log.error(`jobwatch answered ${response.status} ${errorText(response.body)}`);
      return 0;
    }
    const outcomes = [];
    for (const command of response.body?.data ?? []) {
      const outcome = this.unacked.get(String(command.id)) ?? (await this.execute(command));
      if (outcome === null) break; // Redis is down: keep the order, the rest wait for the next poll
      outcomes.push(outcome);
      this.unacked.set(outcome.id, outcome);
      if (this.unacked.size > UNACKED_OUTCOMES_MAX) this.unacked.delete(this.unacked.keys().next().value);
    }
    let acked = 0;
    for (let start = 0; start < outcomes.length; start += ACK_OUTCOMES_PER_REQUEST) {
      const chunk = outcomes.slice(start, start + ACK_OUTCOMES_PER_REQUEST);
      let ack;
      try {
        ack = await this.client.post('/api/agent/commands/ack', { outcomes: chunk });
      } catch (error) {
        log.warn(`ack of ${outcomes.length - acked} commands failed (${/** @type {Error} */ (error).message}); they come back at the next poll and are acknowledged then`);
        return acked;
      }
      if (ack.status !== 200) {
        log.error(`ack refused: ${ack.status} ${errorText(ack.body)}`);
        return acked;
      }
      for (const outcome of chunk) this.unacked.delete(outcome.id);
      acked += chunk.length;
    }
    return acked;
  }

  /** The outcome to acknowledge, or null when Redis could not be reached now. */
  async execute(command) {
    const id = String(command.id);
    const target = targetOf(command);
    let outcome;
    try {
      if ('refused' in target) outcome = failed(id, target.refused);
      else if (!this.watches(target.queue)) outcome = failed(id, `queue ${JSON.stringify(target.queue)} is not watched by this agent (${this.scope}): it acts only on the queues it watches`);
      else if (command.type === 'revoke') outcome = await this.revoke(id, target.queue, target.jobId);
      else if (command.type === 'retry') outcome = await this.retry(id, target.queue, target.jobId);
      else outcome = failed(id, `this agent does not know command type ${JSON.stringify(command.type)}`);
    } catch (error) {
      if (error instanceof RedisUnavailable) {
        log.warn(`${command.type} of ${command.externalId} not carried out now (Redis: ${error.message}); will try again`);
        return null;
      }
      outcome = failed(id, `BullMQ refused: ${/** @type {Error} */ (error).message}`);
    }
    log.info(`${command.type} of job ${command.externalId} -> ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}`);
    return outcome;
  }

  async revoke(id, queueName, jobId) {
    const { job, state } = await this.find(queueName, jobId);
    if (!job) return failed(id, 'the job is no longer in BullMQ (removed, or cleaned up after it finished)');
    if (state === 'unknown') return failed(id, notListed(queueName, jobId));
    if (state === 'active') return failed(id, RUNNING_REASON);
    if (!REVOCABLE.has(state)) return failed(id, `the job is ${state} in BullMQ; only a waiting, prioritized or delayed job can be revoked`);
    try {
      await job.remove({ removeChildren: false });
    } catch (error) {
      if (/locked/i.test(/** @type {Error} */ (error).message)) return failed(id, `the job started running before it could be removed: ${RUNNING_REASON}`);
      throw error;
    }
    return { id, status: 'done' };
  }

  async retry(id, queueName, jobId) {
    const { job, state } = await this.find(queueName, jobId);
    if (!job) return failed(id, 'the job is no longer in BullMQ (removed, or cleaned up after it finished): there is nothing to re-run');
    if (state === 'unknown') return failed(id, notListed(queueName, jobId));
    if (state !== 'failed') return failed(id, `the job is ${state} in BullMQ; only a failed job can be retried`);
    await job.retry('failed');
    return { id, status: 'done' };
  }

  async find(queueName, jobId) {
    if (this.redis.status !== 'ready') throw new RedisUnavailable(`connection ${this.redis.status}`);
    const queue = this.queue(queueName);
    const job = await Job.fromId(queue, jobId);
    if (!job) return { job: null, state: null };
    return { job, state: await job.getState() };
  }

  async close() {
    await Promise.all([...this.queues.values()].map((queue) => queue.close().catch(() => {})));
  }
}

/** A key that is no job of the queue's (a hash of BullMQ's own, say): BullMQ does not confirm it, so it is left alone. */
function notListed(queueName, jobId) {
  return `BullMQ lists no job ${JSON.stringify(jobId)} in any state of queue ${JSON.stringify(queueName)}: nothing was done`;
}

function failed(id, reason) {
  return { id, status: 'failed', reason: reason.slice(0, REASON_CHARS) };
}
