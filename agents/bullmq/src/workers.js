// BullMQ workers have no heartbeat of their own: each Worker holds a blocking Redis
// connection that it names `<prefix>:<base64 of the queue>` or, when given a name,
// `<prefix>:<base64 of the queue>:w:<name>` (bullmq's createBlockingConnection). The
// agent reads CLIENT LIST every couple of seconds, sends a heartbeat for each such
// connection (jobwatch calls a worker offline after 6 s of silence) and `offline` for
// one that disappeared (a worker closed, or killed: Redis drops its socket).
//
// What names a worker: its BullMQ name (the Worker's `name` option, in metadata.workerName),
// its host and its connection. Redis knows a client only by the address it connects from,
// so a worker on Redis's own machine shows as 127.0.0.1; when the agent also reaches Redis
// over loopback, that machine is the agent's and its host name is the worker's. A pid is
// not in Redis at all: name workers `${os.hostname()}:${process.pid}` to see it.
import { hostname as localHostname } from 'node:os';
import { boundJson } from './bound-json.js';
import { cutMarked, EXTERNAL_ID_CHARS, HOSTNAME_CHARS, isoFromMs, QUEUE_CHARS } from './limits.js';
import { logger } from './log.js';

const log = logger('workers');
export const WORKERS_MAX = 10_000;

/**
 * BullMQ worker connections among CLIENT LIST lines.
 * @param {string} list CLIENT LIST reply @param {string} prefix
 * @returns {Array<{clientId: string, addr: string, queue: string, workerName: string | null, ageS: number, idleS: number}>}
 */
export function parseWorkerClients(list, prefix) {
  const head = `${prefix}:`;
  const found = [];
  for (const line of list.split(/\r?\n/)) {
    if (!line) continue;
    /** @type {Record<string, string>} */
    const fields = {};
    for (const pair of line.split(' ')) {
      const at = pair.indexOf('=');
      if (at > 0) fields[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const name = fields.name ?? '';
    if (!name.startsWith(head)) continue;
    const rest = name.slice(head.length);
    const colon = rest.indexOf(':');
    const encoded = colon < 0 ? rest : rest.slice(0, colon);
    const suffix = colon < 0 ? '' : rest.slice(colon);
    if (suffix !== '' && !suffix.startsWith(':w:')) continue; // `:qe` is a QueueEvents listener, not a worker
    if (!/^[A-Za-z0-9+/]+=*$/.test(encoded)) continue;
    const queue = Buffer.from(encoded, 'base64').toString('utf8');
    if (Buffer.from(queue).toString('base64') !== encoded) continue;
    found.push({
      clientId: fields.id ?? '',
      addr: fields.addr ?? '',
      queue,
      workerName: suffix.startsWith(':w:') ? suffix.slice(3) : null,
      ageS: Number(fields.age ?? 0),
      idleS: Number(fields.idle ?? 0),
    });
  }
  return found;
}

/** The `addr` of the agent's own reading connection (named `<agentName>`) in a CLIENT LIST, or null. */
export function agentAddress(list, agentName) {
  if (agentName === '') return null;
  const line = list.split(/\r?\n/).find((each) => each.includes(` name=${agentName} `));
  return line === undefined ? null : (/(?:^| )addr=(\S+)/.exec(line)?.[1] ?? null);
}

/** `127.0.0.1:5100` -> `127.0.0.1`, `[::1]:5100` or `::1:5100` -> `::1`. */
const ipOf = (addr) => addr.slice(0, Math.max(0, addr.lastIndexOf(':'))).replace(/^\[|\]$/g, '') || addr;
const isLoopback = (ip) => /^(::ffff:)?127\./.test(ip) || ip === '::1';

/**
 * The host a worker runs on: the address Redis sees it connect from, or this machine's name
 * when that address is loopback and so is the agent's own (both run where Redis runs).
 */
export function workerHostname(workerAddr, agentAddr, thisHost = localHostname()) {
  const ip = ipOf(workerAddr) || 'unknown';
  const here = agentAddr !== null && isLoopback(ip) && isLoopback(ipOf(agentAddr));
  return cutMarked(here ? thisHost : ip, HOSTNAME_CHARS);
}

/** The worker's jobwatch id: its name (or queue) and the address of its connection. */
export function workerExternalId(client) {
  return cutMarked(`${client.workerName ?? client.queue}@${client.addr}`, EXTERNAL_ID_CHARS);
}

export class WorkerMonitor {
  /**
   * @param {import('ioredis').Redis} redis @param {string} prefix @param {string} connectionId
   * @param {(queue: string) => Map<string, number>} runningByWorker running jobs per worker name, from the event stream
   * @param {(queue: string) => boolean} [watched]
   * @param {string} [agentName] the name of the agent's own reading connection, to learn its address as Redis sees it
   */
  constructor(redis, prefix, connectionId, runningByWorker, watched = () => true, agentName = '') {
    this.redis = redis;
    this.prefix = prefix;
    this.connectionId = connectionId;
    this.runningByWorker = runningByWorker;
    this.watched = watched;
    this.agentName = agentName;
    this.agentAddr = null;
    /** externalId -> client seen at the last look */
    this.current = new Map();
    this.byName = new Map();
    this.failing = false;
  }

  /** Heartbeats for the workers connected now and `offline` for the ones gone; [] while Redis is unreachable. */
  async poll() {
    let list;
    try {
      list = /** @type {string} */ (await this.redis.client('LIST'));
    } catch (error) {
      if (!this.failing) log.warn(`CLIENT LIST failed (${/** @type {Error} */ (error).message}); workers go offline in jobwatch until it works again`);
      this.failing = true;
      return [];
    }
    this.failing = false;
    this.agentAddr = agentAddress(list, this.agentName);
    const clients = parseWorkerClients(list, this.prefix).filter((client) => this.watched(client.queue)).slice(0, WORKERS_MAX);
    const now = Date.now();
    const events = [];
    const next = new Map();
    for (const client of clients) next.set(workerExternalId(client), client);
    for (const [id, client] of next) {
      const isNew = !this.current.has(id);
      if (isNew) log.info(`worker ${id} on queue ${client.queue} connected`);
      events.push(this.event(id, client, isNew ? 'online' : 'heartbeat', now, next));
    }
    for (const [id, client] of this.current) {
      if (next.has(id)) continue;
      log.info(`worker ${id} on queue ${client.queue} disconnected: offline`);
      events.push(this.event(id, client, 'offline', now, next));
    }
    this.current = next;
    /** `<queue>\0<worker name>` -> ids of the workers of that name ('' for unnamed ones) */
    this.byName = new Map();
    for (const [id, client] of next) {
      const key = `${client.queue}\u0000${client.workerName ?? ''}`;
      this.byName.set(key, [...(this.byName.get(key) ?? []), id]);
    }
    return events;
  }

  event(id, client, kind, now, clients) {
    const worker = {
      externalId: id,
      hostname: workerHostname(client.addr, this.agentAddr),
      state: kind,
      queues: [cutMarked(client.queue, QUEUE_CHARS)],
      metadata: boundJson({ redisClientId: client.clientId, addr: client.addr, workerName: client.workerName, connectedS: client.ageS, idleS: client.idleS }),
    };
    if (kind === 'offline') {
      worker.activeJobs = 0;
    } else {
      const running = this.runningOf(client, clients);
      if (running !== null) {
        worker.activeJobs = running;
        if (kind === 'heartbeat') worker.state = running > 0 ? 'busy' : 'idle';
      }
    }
    return { type: 'worker_state_change', timestamp: isoFromMs(now), framework: 'bullmq', connectionId: this.connectionId, worker };
  }

  /** Jobs this worker runs now, when the stream can tell (one worker of that name on the queue); else null. */
  runningOf(client, clients) {
    const namesake = [...clients.values()].filter((other) => other.queue === client.queue && other.workerName === client.workerName);
    if (namesake.length !== 1) return null;
    return this.runningByWorker(client.queue).get(client.workerName ?? '') ?? 0;
  }

  /** The jobwatch id of the worker named `processedBy` on a queue (of the only unnamed one when none), when exactly one matches. */
  workerIdOf(queue, processedBy) {
    const ids = this.byName.get(`${queue}\u0000${processedBy ?? ''}`);
    if (ids !== undefined && ids.length === 1) return ids[0];
    return processedBy || undefined;
  }

  /** Whether a worker of that name on that queue was seen at the last look. */
  knows(queue, workerName) {
    return this.byName.has(`${queue}\u0000${workerName ?? ''}`);
  }

  /** Workers connected per queue. */
  consumers() {
    const counts = new Map();
    for (const client of this.current.values()) counts.set(client.queue, (counts.get(client.queue) ?? 0) + 1);
    return counts;
  }
}
