// `jobwatch-bullmq`: wires discovery, the event reader, normalization, delivery, worker
// and queue monitoring and commands, and stops cleanly on SIGTERM/SIGINT (events read
// are delivered or spooled, and the checkpoints saved).
import { Redis } from 'ioredis';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Backoff } from './backoff.js';
import { Checkpoints } from './checkpoint.js';
import { CommandRunner } from './commands.js';
import { ConfigError, loadConfig, usage } from './config.js';
import { Deliverer } from './deliver.js';
import { discoverQueues } from './discover.js';
import { EventReader } from './event-reader.js';
import { errorText, HttpClient, NetworkError } from './http-client.js';
import { JobFacts } from './job-facts.js';
import { QUEUE_CHARS } from './limits.js';
import { logger, setLogLevel } from './log.js';
import { Normalizer } from './normalize.js';
import { PayloadFields } from './payload-fields.js';
import { mkdirPrivate, PRIVATE_FILE_MODE, tightenPrivateTree } from './private-files.js';
import { QueueMonitor } from './queues.js';
import { Spool } from './spool.js';
import { WorkerMonitor } from './workers.js';

const log = logger('agent');
const SHUTDOWN_FLUSH_MS = 5000;
const CHECKPOINT_SAVE_MS = 250;
const STATS_INTERVAL_MS = 60_000;
const WORKER_RELIST_MS = 500;
const STATUS_INTERVAL_MS = 250;
/** queue names too long to watch, each said once */
const REPORTED_TOO_LONG_MAX = 1000;

/** @param {string[]} argv @param {Record<string, string | undefined>} env @returns {Promise<number>} exit code */
export async function main(argv, env) {
  let config;
  try {
    config = loadConfig(argv, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`jobwatch-bullmq: ${error.message}\n`);
    return 2;
  }
  if (config.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  setLogLevel(config.logLevel);
  const stopping = { stopped: false, wake: /** @type {(value?: unknown) => void} */ (() => {}) };
  const stop = new Promise((resolve) => {
    stopping.wake = resolve;
  });
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      if (!stopping.stopped) log.info(`${signal}: stopping`);
      stopping.stopped = true;
      stopping.wake(undefined);
    });
  }
  const client = new HttpClient(config.url, config.apiKey);
  let connectionId;
  try {
    connectionId = config.connectionId ?? (await askConnection(client, stopping));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`jobwatch-bullmq: ${error.message}\n`);
    return 2;
  }
  if (connectionId === null) return 0;
  let agent;
  try {
    agent = new Agent(config, client, connectionId);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`jobwatch-bullmq: ${error.message}\n`);
    return 2;
  }
  await agent.run(stopping, stop);
  return 0;
}

/** Asks jobwatch which connection the key belongs to; waits while jobwatch is unreachable. */
async function askConnection(client, stopping) {
  const backoff = new Backoff({ baseMs: 1000, capMs: 30_000 });
  while (!stopping.stopped) {
    let response;
    try {
      response = await client.get('/api/agent/connection');
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      const delay = backoff.nextDelayMs();
      log.warn(`jobwatch unreachable (${error.message}); asking for the connection again in ${(delay / 1000).toFixed(1)}s`);
      await sleep(delay);
      continue;
    }
    if (response.status === 200 && response.body?.connectionId) return String(response.body.connectionId);
    if (response.status === 401) throw new ConfigError(`--api-key: jobwatch refused the key (${errorText(response.body)})`);
    if (response.status === 404) throw new ConfigError('--connection-id is required: this jobwatch cannot tell the connection from the key');
    const delay = backoff.nextDelayMs(response.retryAfterMs);
    log.warn(`jobwatch answered ${response.status} ${errorText(response.body)}; asking again in ${(delay / 1000).toFixed(1)}s`);
    await sleep(delay);
  }
  return null;
}

export class Agent {
  constructor(config, client, connectionId) {
    this.config = config;
    const redisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, connectionName: `jobwatch-bullmq:${config.prefix}` };
    this.redis = new Redis(config.redisUrl, redisOptions);
    const readerName = `jobwatch-bullmq:${config.prefix}:reader`;
    this.blocking = new Redis(config.redisUrl, { ...redisOptions, connectionName: readerName });
    for (const connection of [this.redis, this.blocking]) connection.on('error', () => {}); // reported by the loops that use them
    let spool;
    try {
      mkdirPrivate(config.spoolDir);
      for (const line of tightenPrivateTree(config.spoolDir)) log.warn(line);
      spool = new Spool(join(config.spoolDir, 'batches'), config.spoolBytesMax);
      this.checkpoints = new Checkpoints(config.spoolDir, config.prefix);
    } catch (error) {
      throw new ConfigError(`--spool-dir: cannot use ${JSON.stringify(config.spoolDir)} (${/** @type {Error} */ (error).message})`);
    }
    this.workers = new WorkerMonitor(this.redis, config.prefix, connectionId, (queue) => this.normalizer.runningByWorker(queue), (queue) => this.isWatched(queue), readerName);
    const payloads = new PayloadFields({ redactKeys: config.redactKeys, omitArgs: config.omitArgs });
    this.normalizer = new Normalizer(connectionId, new JobFacts(), (queue, name) => this.workers.workerIdOf(queue, name), payloads, config.prefix);
    this.deliverer = new Deliverer(client, spool, {
      batchSize: config.batchSize,
      flushIntervalMs: config.flushIntervalMs,
      onDurable: (marks) => {
        for (const mark of marks) this.checkpoints.advance(mark.queue, mark.id);
      },
    });
    this.workersListedAtMs = 0;
    this.reader = new EventReader({
      redis: this.redis,
      blocking: this.blocking,
      prefix: config.prefix,
      reconcileMax: config.reconcileMax,
      checkpoints: this.checkpoints,
      normalizer: this.normalizer,
      deliverer: this.deliverer,
      // a job run by a worker the agent has not listed yet (it just connected): list the workers
      // first, so the job names the worker by the same id as the worker's own events
      beforeNormalize: async (fresh) => {
        const unknown = [...fresh].some(([key, facts]) => facts?.processedBy && !this.workers.knows(key.slice(0, key.indexOf('\u0000')), facts.processedBy));
        if (!unknown || Date.now() - this.workersListedAtMs < WORKER_RELIST_MS) return; // a worker gone for good: not on every batch
        this.workersListedAtMs = Date.now();
        this.deliverer.submit(await this.workers.poll());
      },
    });
    this.queueMonitor = new QueueMonitor(this.redis, config.prefix, connectionId, () => this.workers.consumers());
    const scope = config.queues.length > 0 ? `it watches ${config.queues.join(', ')} under prefix ${config.prefix}` : `it watches the queues it found under prefix ${config.prefix}`;
    this.commands = new CommandRunner(this.redis, config.prefix, client, (queue) => this.reader.positions.has(queue) || this.reader.toStart.includes(queue), scope);
    this.connectionId = connectionId;
    /** @type {Set<string>} */
    this.reportedTooLong = new Set();
  }

  isWatched(queue) {
    return this.config.queues.length === 0 || this.config.queues.includes(queue);
  }

  async discover() {
    const before = new Set(this.reader.queues);
    const { queues: found, tooLong } = await discoverQueues(this.redis, this.config.prefix, this.config.queues);
    for (const name of tooLong) {
      if (this.reportedTooLong.has(name) || this.reportedTooLong.size >= REPORTED_TOO_LONG_MAX) continue;
      this.reportedTooLong.add(name);
      log.warn(`queue ${JSON.stringify(name.slice(0, 60))}... (${name.length} characters) under prefix ${this.config.prefix} is not watched: jobwatch keeps queue names of at most ${QUEUE_CHARS} characters`);
    }
    const added = found.filter((queue) => !before.has(queue) && !this.reader.toStart.includes(queue));
    if (added.length > 0) log.info(`found ${added.length} new ${added.length === 1 ? 'queue' : 'queues'} under prefix ${this.config.prefix}: ${added.join(', ')}`);
    this.reader.watch(found);
  }

  async run(stopping, stop) {
    const { config } = this;
    log.info(`jobwatch-bullmq starting: Redis ${redacted(config.redisUrl)}, prefix ${config.prefix}, jobwatch ${config.url}, connection ${this.connectionId}, spool ${config.spoolDir}`);
    const masked = config.redactKeys.length > 0 ? `the values of keys matching ${config.redactKeys.join(', ')} masked` : 'nothing masked (--redact-keys none)';
    const omitted = config.omitArgs.length > 0 ? `; the data of ${config.omitArgs.join(', ')} is never sent` : '';
    log.info(`job data, return values, progress and log lines are sent with ${masked}${omitted}`);
    const loops = [
      this.reader.run(stopping),
      this.deliverer.run(stopping),
      every(stopping, stop, 'discover', config.discoverIntervalMs, () => this.discover()),
      every(stopping, stop, 'workers', config.workerIntervalMs, async () => this.deliverer.submit(await this.workers.poll())),
      every(stopping, stop, 'queues', config.queueIntervalMs, async () => this.deliverer.submit(await this.queueMonitor.snapshots(this.reader.queues))),
      every(stopping, stop, 'commands', config.commandIntervalMs, () => this.commands.poll()),
      every(stopping, stop, 'checkpoint', CHECKPOINT_SAVE_MS, () => this.checkpoints.save()),
      every(stopping, stop, 'status', STATUS_INTERVAL_MS, () => this.writeStatus()),
      every(stopping, stop, 'stats', STATS_INTERVAL_MS, async () => this.logStats(), false),
    ];
    await stop;
    log.info('stopping: flushing events and saving the checkpoints');
    this.blocking.disconnect(); // ends a blocking XREAD at once
    await Promise.allSettled(loops);
    await this.deliverer.close(SHUTDOWN_FLUSH_MS);
    while (this.checkpoints.saving) await sleep(10);
    this.checkpoints.saveNow();
    await this.commands.close();
    this.redis.disconnect();
    this.logStats();
  }

  /**
   * `<spool-dir>/status-<prefix>.json`, rewritten every 250 ms (not fsynced: it is for
   * watching, never resumed from): per queue where the reader is and what is delivered,
   * and the delivery counters.
   */
  async writeStatus() {
    const queues = {};
    for (const [queue, state] of this.reader.positions) queues[queue] = { read: state.position, delivered: this.checkpoints.get(queue) };
    const d = this.deliverer;
    const status = { at: new Date().toISOString(), queues, sent: d.sent, pending: d.pending, spooled: d.spool.events, rejected: d.rejected, entriesRead: this.reader.entriesRead };
    const path = join(this.config.spoolDir, `status-${encodeURIComponent(this.config.prefix)}.json`);
    const file = await open(`${path}.tmp`, 'w', PRIVATE_FILE_MODE);
    try {
      await file.chmod(PRIVATE_FILE_MODE);
      await file.writeFile(JSON.stringify(status));
    } finally {
      await file.close();
    }
    await rename(`${path}.tmp`, path);
  }

  logStats() {
    const d = this.deliverer;
    log.info(
      `stats: ${this.reader.queues.length} queues, ${this.reader.entriesRead} stream entries read, ${this.reader.reconciledJobs} jobs reconciled, ` +
        `${d.sent} events sent, ${d.rejected} rejected, ${d.pending} waiting (spool ${d.spool.events}); dropped: ${d.spool.droppedEvents} spool-full, ` +
        `${d.droppedRefused} refused, ${d.truncated} over daily limit`,
    );
  }
}

/** Runs `work` every interval until stopping; a failure is logged once per streak, never fatal. */
async function every(stopping, stop, name, intervalMs, work, firstNow = true) {
  let failing = false;
  if (!firstNow) await Promise.race([sleep(intervalMs), stop]);
  while (!stopping.stopped) {
    try {
      await work();
      if (failing) log.info(`${name} works again`);
      failing = false;
    } catch (error) {
      if (!failing) log.warn(`${name} failed (${/** @type {Error} */ (error).message}); trying again every ${(intervalMs / 1000).toFixed(1)}s`);
      failing = true;
    }
    await Promise.race([sleep(intervalMs), stop]);
  }
}

/** The Redis URL without its password, for logs. */
function redacted(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
