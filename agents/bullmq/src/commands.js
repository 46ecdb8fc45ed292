// Commands from jobwatch, carried out in BullMQ and acknowledged with an outcome: `done`,
// `failed` with the reason ("not found: ..." when BullMQ no longer has the job or queue), or
// `unsupported` with the reason for what BullMQ cannot do (its workers take no commands from
// outside; rate limits are per queue). The agent says what it supports at its start (and
// again after jobwatch was unreachable): `PUT /api/agent/capabilities` (capabilities.js).
// Commands on a job run in job-commands.js, on a queue in queue-commands.js.
//
// Jobs and queues are handled through bullmq's own API on a Queue built with
// `skipMetasUpdate`: it writes nothing to the queue's metadata, unlike a default Queue,
// which rewrites `opts.maxLenEvents`. When Redis cannot be reached the command stays
// unacknowledged and comes back at the next poll.
//
// A command names its job or queue by what jobwatch was sent, and anyone holding the
// connection's API key can send jobwatch anything: a command is checked before any Redis
// key is built from it. The agent acts only in a queue it watches (found under its prefix,
// within `--queues`) that BullMQ still has, on a job BullMQ lists in one of that queue's
// states; anything else is acknowledged `failed` with the reason, and nothing in Redis is
// touched.
import { Job, Queue } from 'bullmq';
import { AGENT_VERSION, bullmqControls, JOB_COMMANDS, QUEUE_COMMANDS } from './capabilities.js';
import { errorText, NetworkError } from './http-client.js';
import { runJobCommand } from './job-commands.js';
import { queueKeys } from './keys.js';
import { EXTERNAL_ID_CHARS, QUEUE_CHARS, TRUNCATED_MARK } from './limits.js';
import { logger } from './log.js';
import { queueParamsOf, runQueueCommand } from './queue-commands.js';

export { RUNNING_REASON } from './job-commands.js';

const log = logger('commands');
const COMMANDS_PER_POLL = 100;
const REASON_CHARS = 1000;
// The service caps an ack body at 128 KiB: 20 outcomes with 1,000-character reasons fit in one request.
const ACK_OUTCOMES_PER_REQUEST = 20;
const UNACKED_OUTCOMES_MAX = 10_000;
const JOB_TYPES = new Set(JOB_COMMANDS);
const QUEUE_TYPES = new Set(QUEUE_COMMANDS);

class RedisUnavailable extends Error {}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `name` is no queue name this agent could act on, or null when it is one: a string of
 * 1 to 255 characters without control characters or `:` (BullMQ refuses `:` in queue names).
 * @param {unknown} name
 */
export function queueNameRefusal(name) {
  if (typeof name !== 'string' || name === '' || name.length > QUEUE_CHARS || name.includes(':') || CONTROL.test(name)) {
    return `not a BullMQ queue name: ${JSON.stringify(String(name)).slice(0, 300)}`;
  }
  return null;
}

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
  if (named !== null) {
    const refused = queueNameRefusal(named);
    if (refused !== null) return { refused };
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
    this.redis = redis;
    this.prefix = prefix;
    this.client = client;
    this.watches = watches;
    this.scope = scope;
    /** @type {Map<string, Queue>} */
    this.queues = new Map();
    /** carried out but not yet acknowledged (the ack failed): not carried out twice */
    this.unacked = new Map();
    this.unreachable = false;
    /** what this agent supports, as it tells jobwatch */
    this.controls = bullmqControls();
    /** jobwatch has the agent's capabilities (sent at start, and again after an outage) */
    this.capabilitiesSent = false;
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

  /** Tells jobwatch what this agent can do; false while jobwatch is unreachable (told again later). */
  async reportCapabilities() {
    const response = await this.client.request('PUT', '/api/agent/capabilities', JSON.stringify({ framework: 'bullmq', agentVersion: AGENT_VERSION, controls: this.controls }));
    if (response.status === 200) {
      const unsupported = Object.entries(this.controls).filter(([, support]) => !support.supported).map(([type]) => type);
      log.info(`told jobwatch what this agent can do (agent ${AGENT_VERSION}): every job and queue command${unsupported.length > 0 ? `; not ${unsupported.join(', ')}` : ''}`);
    } else if (response.status === 404) {
      log.warn('this jobwatch does not take agent capabilities (an older version): its dashboard offers revoke and retry only');
    } else {
      log.error(`jobwatch refused the agent's capabilities: ${response.status} ${errorText(response.body)}`);
    }
    // sent once per connection to jobwatch: a refusal would be the same next time
    this.capabilitiesSent = true;
  }

  /** Fetches pending commands, carries them out and acknowledges them; returns how many were acknowledged. */
  async poll() {
    let response;
    try {
      if (!this.capabilitiesSent) await this.reportCapabilities();
      response = await this.client.get(`/api/agent/commands?limit=${COMMANDS_PER_POLL}`);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      if (!this.unreachable) log.warn(`jobwatch unreachable (${error.message}); polling on`);
      this.unreachable = true;
      this.capabilitiesSent = false; // jobwatch may come back as another version, or from a backup
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
    const type = String(command.type);
    let outcome;
    try {
      if (JOB_TYPES.has(type)) outcome = await this.onJob(id, type, command);
      else if (QUEUE_TYPES.has(type)) outcome = await this.onQueue(id, type, command);
      else {
        const support = this.controls[type];
        outcome = unsupported(id, support && !support.supported ? support.reason : `this agent version does not know '${type.slice(0, 100)}'`);
      }
    } catch (error) {
      if (error instanceof RedisUnavailable) {
        log.warn(`${type} of ${subjectOf(command)} not carried out now (Redis: ${error.message}); will try again`);
        return null;
      }
      outcome = failed(id, `BullMQ refused: ${/** @type {Error} */ (error).message}`);
    }
    log.info(`${type} of ${subjectOf(command)} -> ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}${outcome.details ? ` ${JSON.stringify(outcome.details)}` : ''}`);
    return outcome;
  }

  async onJob(id, type, command) {
    const target = targetOf(command);
    if ('refused' in target) return failed(id, target.refused);
    const refused = this.outOfScope(target.queue);
    if (refused !== null) return failed(id, refused);
    const { job, state } = await this.find(target.queue, target.jobId);
    if (!job) return failed(id, `not found: BullMQ no longer has job ${JSON.stringify(target.jobId)} in queue ${JSON.stringify(target.queue)} (removed, or cleaned up after it finished)`);
    if (state === 'unknown') return failed(id, notListed(target.queue, target.jobId));
    const where = { redis: this.redis, keys: queueKeys(this.prefix, target.queue) };
    return { id, ...(await runJobCommand(type, job, state, where)) };
  }

  async onQueue(id, type, command) {
    const refusedName = queueNameRefusal(command.queue);
    if (refusedName !== null) return failed(id, refusedName);
    const name = String(command.queue);
    const refused = this.outOfScope(name);
    if (refused !== null) return failed(id, refused);
    const read = queueParamsOf(type, command.params);
    if ('refused' in read) return failed(id, `the command's params are not valid: ${read.refused}`);
    this.requireRedis();
    const keys = queueKeys(this.prefix, name);
    if (Number(await this.redis.exists(keys.meta, keys.id, keys.events)) === 0) return failed(id, `not found: BullMQ has no queue ${JSON.stringify(name)} under prefix ${this.prefix} (it was removed)`);
    const outcome = await runQueueCommand(type, this.queue(name), read.params, { redis: this.redis, keys });
    return { id, ...outcome, ...(outcome.status === 'done' ? {} : { reason: outcome.reason.slice(0, REASON_CHARS) }) };
  }

  /** Why the agent does not act in `queue`, or null when it watches it. */
  outOfScope(queue) {
    return this.watches(queue) ? null : `queue ${JSON.stringify(queue)} is not watched by this agent (${this.scope}): it acts only on the queues it watches`;
  }

  requireRedis() {
    if (this.redis.status !== 'ready') throw new RedisUnavailable(`connection ${this.redis.status}`);
  }

  async find(queueName, jobId) {
    this.requireRedis();
    const queue = this.queue(queueName);
    const job = await Job.fromId(queue, jobId);
    if (!job) return { job: null, state: null };
    return { job, state: await job.getState() };
  }

  async close() {
    await Promise.all([...this.queues.values()].map((queue) => queue.close().catch(() => {})));
  }
}

/** What a command acts on, for the log: the job's externalId, the queue, or the worker. */
function subjectOf(command) {
  if (command.externalId !== undefined) return `job ${command.externalId}`;
  if (command.workerId !== undefined) return `worker ${command.workerId}`;
  if (command.name !== undefined) return `task ${command.name}`;
  return `queue ${command.queue}`;
}

/** A key that is no job of the queue's (a hash of BullMQ's own, say): BullMQ does not confirm it, so it is left alone. */
function notListed(queueName, jobId) {
  return `BullMQ lists no job ${JSON.stringify(jobId)} in any state of queue ${JSON.stringify(queueName)}: nothing was done`;
}

function failed(id, reason) {
  return { id, status: 'failed', reason: reason.slice(0, REASON_CHARS) };
}

function unsupported(id, reason) {
  return { id, status: 'unsupported', reason: reason.slice(0, REASON_CHARS) };
}
