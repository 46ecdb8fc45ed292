// Reads every watched queue's event stream (`<prefix>:<queue>:events`) with one blocking
// XREAD on its own connection, from each queue's checkpoint, and hands the normalized
// events to the deliverer with the stream position they reach (the checkpoint moves once
// they are delivered or spooled). A queue found by the agent's first scan with no
// checkpoint, or whose stream was trimmed past it, is reconciled from its state sets first,
// and the reconciliation is logged. A queue found by a later scan was created while the
// agent watched: its stream still holds all it did, so it is read from its beginning.
import { JobFacts } from './job-facts.js';
import { readPayloads } from './job-payloads.js';
import { queueKeys } from './keys.js';
import { compareStreamIds } from './limits.js';
import { logger } from './log.js';
import { payloadWanted, wantsFacts } from './normalize.js';
import { reconcileQueue } from './reconcile.js';

const log = logger('reader');
export const ENTRIES_PER_READ = 2000;
const BLOCK_MS = 500;

/** Fields of a stream entry, from Redis's flat [field, value, ...] array. @param {string[]} flat */
export function fieldsOf(flat) {
  /** @type {Record<string, string>} */
  const fields = {};
  for (let index = 0; index + 1 < flat.length; index += 2) fields[flat[index]] = flat[index + 1];
  return fields;
}

/**
 * Whether entries after `position` may have left the stream before the agent read them.
 * Trimming (XADD MAXLEN ~) removes the oldest entries first, so while the oldest entry is
 * at or before the position nothing after it is gone. A stream that never lost an entry
 * (Redis 7's entries-added equals its length) has no gap either; a stream gone after
 * something was read has one. (An oldest entry just past the position may also mean
 * nothing was lost there; that case is reconciled too: reading too much costs only time.)
 * @param {any[] | null} info XINFO STREAM reply, null when the stream does not exist
 * @param {string} position
 */
export function streamGap(info, position) {
  if (info === null) return position !== '0-0' ? { since: position, oldest: null } : null;
  /** @type {Record<string, any>} */
  const fields = {};
  for (let index = 0; index + 1 < info.length; index += 2) fields[info[index]] = info[index + 1];
  const oldest = Array.isArray(fields['first-entry']) ? fields['first-entry'][0] : null;
  if (typeof fields['entries-added'] === 'number' && fields['entries-added'] === fields.length) return null;
  return oldest !== null && compareStreamIds(oldest, position) > 0 ? { since: position, oldest } : null;
}

export class EventReader {
  /**
   * @param {{redis: import('ioredis').Redis, blocking: import('ioredis').Redis, prefix: string, reconcileMax: number,
   *   checkpoints: import('./checkpoint.js').Checkpoints, normalizer: import('./normalize.js').Normalizer,
   *   deliverer: import('./deliver.js').Deliverer, beforeNormalize?: (fresh: Map<string, any>) => Promise<void>}} parts
   */
  constructor({ redis, blocking, prefix, reconcileMax, checkpoints, normalizer, deliverer, beforeNormalize = async () => {} }) {
    this.redis = redis;
    this.blocking = blocking;
    this.prefix = prefix;
    this.reconcileMax = reconcileMax;
    this.checkpoints = checkpoints;
    this.normalizer = normalizer;
    this.deliverer = deliverer;
    this.beforeNormalize = beforeNormalize;
    /** queue -> position read up to, and whether to look for a gap before the next read */
    this.positions = new Map();
    /** @type {string[]} queues found but not yet started */
    this.toStart = [];
    /** whether the first scan's queues were handed over: queues found after it are new */
    this.scanned = false;
    /** queues found after the first scan, not yet started */
    this.foundLater = new Set();
    this.entriesRead = 0;
    this.reconciledJobs = 0;
    this.failing = false;
    /** @type {Promise<{queues: Map<string, string>, reply: any}> | null} the next read, started early */
    this.prefetched = null;
  }

  /**
   * Queues to watch (new ones are started before the next read). The first call hands over
   * the queues that existed when the agent started; a queue in a later call appeared since.
   * @param {string[]} queues
   */
  watch(queues) {
    for (const queue of queues) {
      if (this.positions.has(queue) || this.toStart.includes(queue)) continue;
      this.toStart.push(queue);
      if (this.scanned) this.foundLater.add(queue);
    }
    this.scanned = true;
  }

  get queues() {
    return [...this.positions.keys()];
  }

  /** @param {{stopped: boolean}} stopping */
  async run(stopping) {
    while (!stopping.stopped) {
      try {
        await this.readOnce(stopping);
        if (this.failing) log.info('Redis reachable again; reading the streams from where they stopped');
        this.failing = false;
      } catch (error) {
        if (stopping.stopped) return;
        if (!this.failing) log.warn(`reading the event streams failed (${/** @type {Error} */ (error).message}); trying again every second`);
        this.failing = true;
        await sleep(1000);
      }
    }
  }

  async readOnce(stopping) {
    while (this.toStart.length > 0) {
      await this.start(/** @type {string} */ (this.toStart[0]));
      this.toStart.shift();
    }
    for (const [queue, state] of this.positions) {
      if (state.checkGap) await this.checkGap(queue, state);
    }
    while (this.deliverer.memoryFull && !stopping.stopped) await sleep(20); // the stream keeps them meanwhile
    if (this.positions.size === 0) {
      await sleep(BLOCK_MS);
      return;
    }
    // The next read is already under way while this one's job hashes are read and its
    // entries normalized: the two connections work at once.
    const current = this.prefetched ?? this.read();
    this.prefetched = null;
    const { queues, reply } = await current;
    if (!reply) return;
    const batches = [];
    /** @type {Array<{queue: string, jobId: string}>} */
    const wanted = [];
    const wantedKeys = new Set();
    /** @type {Map<string, import('./job-payloads.js').PayloadRequest>} */
    const payloadRequests = new Map();
    for (const [key, rawEntries] of reply) {
      const queue = queues.get(key);
      const state = queue === undefined ? undefined : this.positions.get(queue);
      if (queue === undefined || state === undefined) continue;
      // a gap check may have moved the queue past what this read returned (entries come in order)
      const fresh = rawEntries.length > 0 && compareStreamIds(rawEntries[0][0], state.position) > 0 ? rawEntries : rawEntries.filter(([id]) => compareStreamIds(id, state.position) > 0);
      if (fresh.length === 0) continue;
      const entries = fresh.map(([id, flat]) => ({ id, fields: fieldsOf(flat) }));
      for (const { fields } of entries) {
        this.askPayload(payloadRequests, queue, fields);
        if (!wantsFacts(fields, this.normalizer.facts.has(queue, fields.jobId))) continue;
        const jobKey = JobFacts.key(queue, fields.jobId);
        if (wantedKeys.has(jobKey)) continue;
        wantedKeys.add(jobKey);
        wanted.push({ queue, jobId: fields.jobId });
      }
      batches.push({ queue, entries, from: state.position });
      state.position = entries[entries.length - 1].id; // what the next read (perhaps started below) goes on from
      state.checkGap = rawEntries.length >= ENTRIES_PER_READ; // behind: the app may trim what the agent has not read yet
    }
    const behind = batches.some(({ queue }) => this.positions.get(queue)?.checkGap);
    if (!behind && !stopping.stopped) {
      this.prefetched = this.read();
      this.prefetched.catch(() => {}); // its failure is met when it is awaited
    }
    let facts;
    let payloads;
    try {
      facts = await JobFacts.read(this.redis, this.prefix, wanted);
      payloads = await readPayloads(this.redis, this.prefix, [...payloadRequests.values()]);
      await this.beforeNormalize(facts);
    } catch (error) {
      // nothing of this batch was handed on: read it again, and drop the read made past it
      for (const batch of batches) this.positions.get(batch.queue).position = batch.from;
      this.prefetched = null;
      throw error;
    }
    for (const { queue, entries } of batches) {
      const events = this.normalizer.normalizeEntries(queue, entries, facts, payloads);
      this.entriesRead += entries.length;
      this.deliverer.submit(events, { queue, id: entries[entries.length - 1].id });
    }
  }

  /**
   * What an entry calls for reading of its job's data and log (normalize.js's
   * payloadWanted), merged into one request per job of the batch.
   * @param {Map<string, import('./job-payloads.js').PayloadRequest>} requests @param {string} queue @param {Record<string, string>} fields
   */
  askPayload(requests, queue, fields) {
    const known = this.normalizer.facts.get(queue, fields.jobId ?? '');
    const wanted = payloadWanted(fields, known);
    if (!wanted.data && !wanted.logs) return;
    const key = JobFacts.key(queue, fields.jobId);
    const request = requests.get(key);
    if (request === undefined) {
      requests.set(key, { queue, jobId: fields.jobId, data: wanted.data, returnvalue: false, logs: wanted.logs, logCount: known.logCount ?? 0, logSha: known.logSha ?? '' });
    } else {
      request.data ||= wanted.data;
      request.logs ||= wanted.logs;
    }
  }

  /** One blocking XREAD of every watched stream from its position. */
  async read() {
    const queues = new Map();
    const keys = [];
    const ids = [];
    for (const [queue, state] of this.positions) {
      const key = queueKeys(this.prefix, queue).events;
      queues.set(key, queue);
      keys.push(key);
      ids.push(state.position);
    }
    const reply = /** @type {Array<[string, Array<[string, string[]]>]> | null} */ (
      await this.blocking.xread('COUNT', ENTRIES_PER_READ, 'BLOCK', BLOCK_MS, 'STREAMS', ...keys, ...ids)
    );
    return { queues, reply };
  }

  /**
   * First read of a queue: from its checkpoint; from the beginning of its stream when it
   * appeared after the first scan; else reconciled from its state sets.
   * @param {string} queue
   */
  async start(queue) {
    const checkpoint = this.checkpoints.get(queue);
    if (checkpoint !== null || this.foundLater.has(queue)) {
      // A queue created while the agent watched: its jobs may have been added (and started)
      // before the scan found it; their events are in the stream, the state sets would give
      // only where they are now. A stream already trimmed is reconciled by the gap check.
      const state = { position: checkpoint ?? '0-0', checkGap: true };
      this.positions.set(queue, state);
      await this.checkGap(queue, state);
      this.foundLater.delete(queue);
      if (state.reconciled) return;
      if (checkpoint !== null) log.info(`queue ${queue}: resuming its event stream after ${checkpoint}`);
      else log.info(`queue ${queue}: new since the agent started; reading its event stream from its beginning`);
      return;
    }
    const tail = await this.tail(queue);
    const { events, counts } = await reconcileQueue(this.redis, this.prefix, queue, this.reconcileMax, this.normalizer);
    this.reconciledJobs += events.length;
    log.info(`queue ${queue}: first seen; ${describe(counts, events.length)} read from its state sets; following its event stream after ${tail}`);
    this.positions.set(queue, { position: tail, checkGap: false });
    this.deliverer.submit(events, { queue, id: tail });
  }

  /** @param {string} queue @param {{position: string, checkGap: boolean, reconciled?: boolean}} state */
  async checkGap(queue, state) {
    state.checkGap = false;
    const key = queueKeys(this.prefix, queue).events;
    const info = await this.redis.xinfo('STREAM', key).catch((error) => {
      if (/no such key/i.test(error.message)) return null;
      throw error;
    });
    const gap = streamGap(/** @type {any[] | null} */ (info), state.position);
    if (gap === null) return;
    const tail = await this.tail(queue);
    const { events, counts } = await reconcileQueue(this.redis, this.prefix, queue, this.reconcileMax, this.normalizer);
    this.reconciledJobs += events.length;
    const where = gap.oldest === null ? 'the stream is gone' : `its oldest entry is now ${gap.oldest}`;
    log.warn(
      `queue ${queue}: events after ${gap.since} were trimmed from the stream before the agent read them (${where}); ` +
        `reconciled from the state sets: ${describe(counts, events.length)}; following the stream after ${tail}`,
    );
    state.position = tail;
    state.reconciled = true;
    this.deliverer.submit(events, { queue, id: tail });
  }

  /** The id of the stream's newest entry ('0-0' when empty or absent). @param {string} queue */
  async tail(queue) {
    const newest = await this.redis.xrevrange(queueKeys(this.prefix, queue).events, '+', '-', 'COUNT', 1);
    return newest.length > 0 ? newest[0][0] : '0-0';
  }
}

function describe(counts, total) {
  const parts = Object.entries(counts).map(([set, count]) => `${count} ${set}`);
  return parts.length > 0 ? `${total} jobs (${parts.join(', ')})` : 'no jobs';
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
