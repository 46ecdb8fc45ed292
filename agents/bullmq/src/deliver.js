// Batches events to `POST /api/ingest`; spools them while jobwatch is unreachable.
//
// While the spool holds anything, new events go behind it on disk and the spool is
// drained oldest first, one batch at a time. Otherwise a few batches are in flight at
// once; when one of them fails it is spooled, so it may arrive after a later one: jobwatch
// orders each job's events by their timestamps, not by arrival. Each submitted group of events may carry a stream
// position (a "mark"); a mark is handed to `onDurable` once every event before it was
// delivered or written to the spool, which is when the reader's checkpoint may move.
// The service skips duplicates, so a batch resent after a lost reply is harmless.
//
// A batch jobwatch refuses as a whole (400 or 413: something in the body it will not take)
// is sent again in halves, and the halves' halves, until the events it refuses are alone:
// only those are dropped, each named in the log, and the rest of the batch is delivered.
// One job's odd value never costs the other jobs' events. Any other 4xx but 429 drops the
// batch (sending it again would fail the same way); events jobwatch rejects one by one in
// a 200 answer are logged and counted, never sent again.
import { Backoff } from './backoff.js';
import { errorText, NetworkError } from './http-client.js';
import { INGEST_BODY_BYTES_MAX } from './limits.js';
import { logger } from './log.js';

const log = logger('deliver');
const ENVELOPE_BYTES = '{"events":[]}'.length;
const EVENT_ERRORS_LOGGED_MAX = 3;
/** Events of one batch named one by one when refused; past it a count says how many more. */
const REFUSED_NAMED_MAX = 20;
/** Statuses saying that something in the body is refused, not the request: split the batch. */
const REFUSED_BODY = new Set([400, 413]);

/**
 * @typedef {{queue: string, id: string}} Mark
 * @typedef {{line: string | null, bytes: number, mark: Mark | null}} Item
 */

export class Deliverer {
  /**
   * @param {import('./http-client.js').HttpClient} client
   * @param {import('./spool.js').Spool} spool
   * @param {{batchSize?: number, flushIntervalMs?: number, bodyBytesMax?: number, memoryEventsMax?: number, batchesInFlight?: number, backoff?: Backoff, onDurable?: (marks: Mark[]) => void}} [options]
   */
  constructor(client, spool, { batchSize = 1000, flushIntervalMs = 250, bodyBytesMax = INGEST_BODY_BYTES_MAX, memoryEventsMax = 50_000, batchesInFlight = 3, backoff = new Backoff(), onDurable = () => {} } = {}) {
    this.client = client;
    this.spool = spool;
    this.batchSize = batchSize;
    this.flushIntervalMs = flushIntervalMs;
    this.bodyBytesMax = bodyBytesMax;
    this.memoryEventsMax = memoryEventsMax;
    this.batchesInFlight = batchesInFlight;
    this.backoff = backoff;
    this.onDurable = onDurable;
    /** @type {Item[]} */
    this.memory = [];
    this.memoryEvents = 0;
    this.retryAt = 0;
    this.outageSince = null;
    this.sending = Promise.resolve();
    this.wake = null;
    this.sent = 0;
    this.rejected = 0;
    this.droppedRefused = 0;
    this.spoolFailures = 0;
    this.truncated = 0;
  }

  /** @param {object[]} events ingest events @param {Mark | null} [mark] stream position reached with them */
  submit(events, mark = null) {
    for (const event of events) {
      const line = JSON.stringify(event);
      // at most 3 UTF-8 bytes per UTF-16 unit: a bound, cheaper than counting each event's bytes
      this.memory.push({ line, bytes: line.length * 3 + 1, mark: null });
    }
    this.memoryEvents += events.length;
    if (mark) this.memory.push({ line: null, bytes: 0, mark });
    if (this.memoryEvents >= this.batchSize && this.wake) this.wake();
  }

  /** The reader waits while this is true: the stream keeps the events meanwhile. */
  get memoryFull() {
    return this.memoryEvents >= this.memoryEventsMax;
  }

  get pending() {
    return this.memoryEvents + this.spool.events;
  }

  /** Sends until `stopping.stopped`; one step at a time. @param {{stopped: boolean}} stopping */
  async run(stopping) {
    while (!stopping.stopped) {
      if (this.memoryEvents < this.batchSize) {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, this.flushIntervalMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve(undefined);
          };
        });
        this.wake = null;
      }
      try {
        await this.step();
      } catch (error) {
        log.error(`flush failed unexpectedly (${/** @type {Error} */ (error).stack}); trying again`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  /** One flush, never two at once: the spool's oldest batches when due, else memory. */
  step() {
    // a step that failed unexpectedly does not stop the ones after it (its caller logs it)
    this.sending = this.sending.catch(() => {}).then(() => this.stepNow());
    return this.sending;
  }

  async stepNow() {
    if (!this.spool.isEmpty) {
      this.spillMemory();
      while (!this.spool.isEmpty && Date.now() >= this.retryAt) {
        const oldest = this.spool.oldest();
        if (oldest === null) break;
        if (!(await this.send(oldest.events, true))) return;
        this.spool.remove(oldest.sequence);
      }
      return;
    }
    for (;;) {
      // A few batches in flight at once: jobwatch orders a job's events by their timestamps,
      // so arrival order does not matter, and a busy jobwatch's reply time is not paid per batch.
      const batches = [];
      while (batches.length < this.batchesInFlight) {
        const batch = this.takeBatch();
        if (batch.items.length === 0) break;
        batches.push(batch);
      }
      if (batches.length === 0) return;
      const sent = await Promise.all(batches.map((batch) => (batch.lines.length === 0 ? true : this.send(batch.lines, false))));
      let failed = false;
      let kept = true; // marks move in order: none past a batch that is neither delivered nor on disk
      batches.forEach((batch, index) => {
        if (sent[index]) {
          if (kept) this.durable(batch.items);
        } else {
          failed = true;
          kept = kept && this.toSpool(batch);
        }
      });
      if (failed) {
        this.spillMemory();
        return;
      }
    }
  }

  /** On shutdown: send what is in memory while jobwatch answers; spool the rest. @param {number} deadlineMs */
  async close(deadlineMs) {
    await this.sending.catch(() => {});
    const end = Date.now() + deadlineMs;
    while (this.memory.length > 0 && this.spool.isEmpty && Date.now() < end) {
      const batch = this.takeBatch();
      if (batch.lines.length === 0 || (await this.send(batch.lines, false))) this.durable(batch.items);
      else this.toSpool(batch);
    }
    this.spillMemory();
    if (!this.spool.isEmpty) log.info(`shutdown: ${this.spool.events} events kept in the spool for the next start`);
  }

  takeBatch() {
    /** @type {Item[]} */
    const items = [];
    /** @type {string[]} */
    const lines = [];
    let size = ENVELOPE_BYTES;
    let taken = 0;
    while (taken < this.memory.length && lines.length < this.batchSize) {
      const item = this.memory[taken];
      if (item.line !== null && lines.length > 0 && size + item.bytes > this.bodyBytesMax) break;
      taken += 1;
      items.push(item);
      if (item.line !== null) {
        lines.push(item.line);
        size += item.bytes;
      }
    }
    this.memory.splice(0, taken);
    this.memoryEvents -= lines.length;
    return { items, lines };
  }

  spillMemory() {
    for (;;) {
      const batch = this.takeBatch();
      if (batch.items.length === 0 || !this.toSpool(batch)) return;
    }
  }

  /** @param {{items: Item[], lines: string[]}} batch @returns {boolean} false when the disk refused it (kept in memory) */
  toSpool(batch) {
    try {
      this.spool.append(batch.lines);
    } catch (error) {
      // Disk full, directory gone: keep the events in memory, in order; the reader pauses
      // once memory is full, and the stream holds the rest.
      this.memory.unshift(...batch.items);
      this.memoryEvents += batch.lines.length;
      this.spoolFailures += 1;
      if (this.spoolFailures === 1 || this.spoolFailures % 100 === 0) {
        log.error(`could not write the spool (${/** @type {Error} */ (error).message}); ${this.memoryEvents} events held in memory (${this.spoolFailures} failed writes)`);
      }
      return false;
    }
    this.spoolFailures = 0;
    this.durable(batch.items);
    return true;
  }

  /** @param {Item[]} items */
  durable(items) {
    const marks = items.filter((item) => item.mark !== null).map((item) => /** @type {Mark} */ (item.mark));
    if (marks.length > 0) this.onDurable(marks);
  }

  /** True when the batch needs no resending (delivered, or refused for good). @param {string[]} lines @param {boolean} inSpool */
  async send(lines, inSpool) {
    const refusals = { named: 0, dropped: 0 };
    const settled = await this.sendPart(lines, inSpool, refusals);
    if (refusals.dropped > refusals.named) log.error(`... and ${refusals.dropped - refusals.named} more events of the batch refused and dropped`);
    return settled;
  }

  /** @param {string[]} lines @param {boolean} inSpool @param {{named: number, dropped: number}} refusals this batch's, for the log */
  async sendPart(lines, inSpool, refusals) {
    let response;
    try {
      response = await this.client.request('POST', '/api/ingest', `{"events":[${lines.join(',')}]}`);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      return this.retryLater(`jobwatch unreachable (${error.message})`, null, inSpool ? 0 : lines.length);
    }
    if (response.status === 429 || response.status >= 500) {
      return this.retryLater(`jobwatch answered ${response.status} ${errorText(response.body)}`, response.retryAfterMs, inSpool ? 0 : lines.length);
    }
    if (REFUSED_BODY.has(response.status)) {
      if (lines.length === 1) {
        this.refusedEvent(lines[0], response, refusals);
        return true;
      }
      if (refusals.named === 0 && refusals.dropped === 0) {
        log.warn(`jobwatch refused a batch of ${lines.length} events with ${response.status} (${errorText(response.body)}); sending it again in halves, so that only the events it refuses are dropped`);
      }
      const half = Math.ceil(lines.length / 2);
      // the second half waits for the first: a failure (an outage) leaves the batch whole for the spool
      return (await this.sendPart(lines.slice(0, half), inSpool, refusals)) && (await this.sendPart(lines.slice(half), inSpool, refusals));
    }
    if (response.status >= 400) {
      this.droppedRefused += lines.length;
      log.error(`jobwatch refused a batch with ${response.status} (${errorText(response.body)}): dropped ${lines.length} events; ${this.droppedRefused} dropped this way since start`);
      return true;
    }
    this.delivered(lines, response.body ?? {});
    return true;
  }

  /** One event jobwatch refuses on its own: dropped, and named. */
  refusedEvent(line, response, refusals) {
    this.droppedRefused += 1;
    refusals.dropped += 1;
    if (refusals.named >= REFUSED_NAMED_MAX) return;
    refusals.named += 1;
    log.error(`jobwatch refused ${eventIdentity(line)} with ${response.status} (${errorText(response.body)} ${JSON.stringify(response.body?.error?.details ?? {})}): dropped this event only; ${this.droppedRefused} events dropped this way since start`);
  }

  retryLater(reason, retryAfterMs, outside) {
    const delay = this.backoff.nextDelayMs(retryAfterMs);
    this.retryAt = Date.now() + delay;
    if (this.outageSince === null) this.outageSince = Date.now();
    log.warn(`flush failed: ${reason}; retrying in ${(delay / 1000).toFixed(2)}s, ${this.pending + outside} events waiting`);
    return false;
  }

  delivered(lines, body) {
    if (this.outageSince !== null) {
      log.info(`jobwatch reachable again after ${((Date.now() - this.outageSince) / 1000).toFixed(1)}s; sending the spooled events in order`);
      this.outageSince = null;
    }
    this.backoff.reset();
    this.retryAt = 0;
    this.sent += Number(body.accepted ?? 0) + Number(body.skipped ?? 0);
    const rejected = Number(body.rejected ?? 0);
    const truncated = Number(body.truncated ?? 0);
    if (rejected > 0) {
      this.rejected += rejected;
      for (const error of (body.errors ?? []).slice(0, EVENT_ERRORS_LOGGED_MAX)) {
        const event = Number.isInteger(error.index) && lines[error.index] !== undefined ? eventIdentity(lines[error.index]) : `event ${error.index}`;
        log.error(`jobwatch rejected ${event}: ${error.code} ${error.message} ${JSON.stringify(error.details ?? {})}`);
      }
      log.error(`jobwatch rejected ${rejected} of ${lines.length} events in a batch (${this.rejected} since start)`);
    }
    if (truncated > 0) {
      this.truncated += truncated;
      log.error(`jobwatch's daily event limit: ${truncated} events of a batch dropped (${this.truncated} since start)`);
    }
  }
}

/**
 * What identifies an event in the log: its type, the job's externalId (the worker's, the
 * queue's name) and its time. @param {string} line the event's JSON
 */
export function eventIdentity(line) {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    return `an event (${line.slice(0, 120)})`;
  }
  const payload = event?.job ?? event?.worker ?? event?.queue ?? {};
  const id = payload.externalId ?? payload.name;
  const text = (value) => (typeof value === 'string' ? value.slice(0, 600) : JSON.stringify(value ?? null).slice(0, 600));
  return `event ${text(event?.type)} ${text(id)}${payload.state ? ` (${text(payload.state)})` : ''} at ${text(event?.timestamp)}`;
}
