// BullMQ's event-stream entries -> jobwatch ingest events.
//
// Native events map to unified states as the README's table says: added/waiting ->
// queued (scheduled when delayed), delayed -> scheduled, or retrying when the job had
// started (a failed attempt waiting for its backoff), waiting after active -> retrying,
// active and progress -> active, completed -> completed, failed -> failed, stalled ->
// queued (the stall in extensions), removed while pending -> cancelled. Every event is
// timed by its stream id, which is Redis's clock. A job's externalId is
// `<queue>:<job id>`: BullMQ ids repeat across queues. A job's data (read once, when the
// agent first reads the job) and the log lines read after an event go with the job's next
// event; a `completed` entry carries the return value, a `progress` entry the progress
// (payload-fields.js masks and bounds them all).
import { boundJson } from './bound-json.js';
import { JobFacts } from './job-facts.js';
import { cutMarked, ERROR_CHARS, EXTERNAL_ID_CHARS, isoFromMs, msOfStreamId, NAME_CHARS, QUEUE_CHARS, STACKTRACE_CHARS, WORKER_ID_CHARS } from './limits.js';
import { PayloadFields } from './payload-fields.js';

export { progressFraction } from './payload-fields.js';

export const UNKNOWN_NAME = 'unknown';
/** Events that change nothing of a job jobwatch shows. */
const QUEUE_LEVEL = new Set(['drained', 'paused', 'resumed', 'cleaned', 'deduplicated', 'debounced', 'duplicated', 'retries-exhausted']);
const PENDING_NATIVE = new Set(['waiting', 'wait', 'delayed', 'prioritized', 'paused', 'waiting-children']);
const FINISHED = new Set(['completed', 'failed', 'cancelled']);
/** Events after which the job's hash has news (the worker's name, attempts, an error): read it. */
const FACT_EVENTS = new Set(['active', 'delayed', 'failed', 'stalled']);
/** Events after which the hash is read only for a job the agent knows nothing of yet. */
const FACT_EVENTS_IF_UNKNOWN = new Set(['added', 'waiting', 'completed', 'waiting-children', 'progress']);
/** Events around a run, after which the job's log may have new lines. */
const LOG_EVENTS = new Set(['active', 'progress', 'completed', 'failed', 'delayed', 'stalled']);

/**
 * Whether a stream entry calls for reading the job's hash.
 * @param {{event?: string, jobId?: string, prev?: string}} fields @param {boolean} known whether the agent has facts of the job
 */
export function wantsFacts(fields, known) {
  if (!fields.jobId || !fields.event) return false;
  if (FACT_EVENTS.has(fields.event)) return true;
  if (fields.event === 'waiting' && fields.prev === 'active') return true; // a retry: its error
  return !known && FACT_EVENTS_IF_UNKNOWN.has(fields.event);
}

/**
 * What to read of a job's data and log after a stream entry (job-payloads.js): its data
 * once, when the agent first reads the job; its log after the events around a run.
 * @param {{event?: string, jobId?: string, prev?: string}} fields @param {import('./job-facts.js').Facts} known
 */
export function payloadWanted(fields, known) {
  if (!fields.jobId || !fields.event || fields.event === 'removed') return { data: false, logs: false };
  const retried = fields.event === 'waiting' && fields.prev === 'active';
  return { data: !known.dataRead, logs: LOG_EVENTS.has(fields.event) || retried };
}

/** @param {string} queue @param {string} jobId */
export function externalIdOf(queue, jobId) {
  return cutMarked(`${queue}:${jobId}`, EXTERNAL_ID_CHARS);
}

/**
 * A flow child's parent as jobwatch knows it (`<queue>:<job id>`), from the child's
 * `parentKey` (`<prefix>:<queue>:<job id>`); undefined without one, or when the parent is
 * under another prefix (another agent's queues: no job of this connection).
 * @param {string | undefined} parentKey @param {string} prefix
 */
export function parentExternalIdOf(parentKey, prefix) {
  if (!parentKey || !parentKey.startsWith(`${prefix}:`)) return undefined;
  const rest = parentKey.slice(prefix.length + 1);
  const colon = rest.indexOf(':'); // BullMQ queue names have no colon; job ids may
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return externalIdOf(rest.slice(0, colon), rest.slice(colon + 1));
}

export class Normalizer {
  /**
   * @param {string} connectionId
   * @param {import('./job-facts.js').JobFacts} facts
   * @param {(queue: string, processedBy: string | undefined) => string | undefined} [workerIdOf]
   * @param {PayloadFields} [payloads] how data, return values, progress and log lines are masked, bounded or left out
   * @param {string} [prefix] the Redis key prefix of the queues watched (a flow's parentKey starts with it)
   */
  constructor(connectionId, facts, workerIdOf = (_queue, name) => name, payloads = new PayloadFields(), prefix = 'bull') {
    this.connectionId = connectionId;
    this.prefix = prefix;
    this.facts = facts;
    this.workerIdOf = workerIdOf;
    this.payloads = payloads;
    /** @type {Map<string, import('./job-payloads.js').PayloadRead>} job key -> data and log lines read for the batch, sent with the job's first event in it */
    this.read = new Map();
    /** queue -> job id -> worker name (jobs running now, for the workers' busy count) */
    this.active = new Map();
    this.ignored = 0;
  }

  /**
   * The ingest events for a batch of one queue's stream entries.
   * @param {string} queue
   * @param {Array<{id: string, fields: Record<string, string>}>} entries
   * @param {Map<string, import('./job-facts.js').Facts | null>} [fresh] facts just read for jobs of the batch
   * @param {Map<string, import('./job-payloads.js').PayloadRead>} [payloads] data and log lines just read for jobs of the batch
   */
  normalizeEntries(queue, entries, fresh = new Map(), payloads = new Map()) {
    for (const [key, learned] of fresh) {
      if (learned) {
        const [, jobId] = key.split('\u0000');
        if (key.startsWith(`${queue}\u0000`)) this.facts.learn(queue, jobId, learned);
      }
    }
    this.takeRead(queue, payloads);
    const out = [];
    entries.forEach((entry, index) => {
      const next = entries[index + 1];
      const event = this.normalizeEntry(queue, entry, isStallMove(entry, next), isDelayedAdd(entry, next));
      if (event) out.push(event);
    });
    this.read.clear(); // what no event of the batch took (a job removed meanwhile) is not kept
    return out;
  }

  /**
   * Data and log lines read for a queue's jobs, to go with each job's next event; the
   * job's facts remember that its data was read and how far its log was.
   * @param {string} queue @param {Map<string, import('./job-payloads.js').PayloadRead>} payloads
   */
  takeRead(queue, payloads) {
    for (const [key, read] of payloads) {
      if (!key.startsWith(`${queue}\u0000`)) continue;
      const jobId = key.slice(queue.length + 1);
      /** @type {import('./job-facts.js').Facts} */
      const learned = { dataRead: true };
      if (read.logs) Object.assign(learned, { logCount: read.logs.count, logSha: read.logs.sha });
      this.facts.learn(queue, jobId, learned);
      this.read.set(key, read);
    }
  }

  /**
   * @param {string} queue @param {{id: string, fields: Record<string, string>}} entry
   * @param {boolean} stallMove the entry is the move back to waiting that a stall entry right after it explains
   * @param {boolean} delayedAdd the entry adds a job whose `delayed` entry, with its time, comes right after it
   */
  normalizeEntry(queue, entry, stallMove = false, delayedAdd = false) {
    const { event: kind, jobId } = entry.fields;
    const atMs = msOfStreamId(entry.id);
    if (!kind || !jobId || QUEUE_LEVEL.has(kind)) {
      this.ignored += 1;
      return null;
    }
    const known = this.facts.get(queue, jobId);
    const previousNative = known.native;
    /** @type {{state: string, native: string, error?: string, failed?: boolean, result?: unknown, progress?: number | Record<string, unknown>, extensions?: Record<string, unknown>} | null} */
    let change = null;
    switch (kind) {
      case 'added':
        this.facts.learn(queue, jobId, { name: entry.fields.name || undefined, addedAtMs: atMs });
        if (delayedAdd) return null; // the delayed entry says it, with when the job runs
        // the hash may be read after the job ran: a delay it shows then is a backoff's, not the job's own
        change = (known.delayMs ?? 0) > 0 && !((known.attemptsMade ?? 0) > 0) ? { state: 'scheduled', native: 'delayed' } : { state: 'queued', native: (known.priority ?? 0) > 0 ? 'prioritized' : 'waiting' };
        break;
      case 'waiting':
        if (stallMove) return null; // the stalled entry after it says it
        if (entry.fields.prev === 'active') change = { state: 'retrying', native: 'waiting', failed: true };
        else if (previousNative === 'waiting' || previousNative === 'prioritized') return null; // "added" then "waiting": nothing new
        else change = { state: 'queued', native: (known.priority ?? 0) > 0 ? 'prioritized' : 'waiting' };
        break;
      case 'waiting-children':
        change = { state: 'queued', native: 'waiting-children' };
        break;
      case 'delayed': {
        const eta = Number(entry.fields.delay);
        const hasEta = Number.isFinite(eta) && eta > 0;
        const afterARun = previousNative === 'active' || (previousNative === undefined && (known.attemptsMade ?? 0) > 0);
        if (afterARun) {
          // a backoff: when the next attempt runs is news of this event only, not when the job was scheduled for
          change = { state: 'retrying', native: 'delayed', failed: true, extensions: hasEta ? { eta: isoFromMs(eta), nextAttemptAt: isoFromMs(eta) } : {} };
        } else {
          if (hasEta) this.facts.learn(queue, jobId, { etaMs: eta });
          change = { state: 'scheduled', native: 'delayed' };
        }
        break;
      }
      case 'active':
        change = { state: 'active', native: 'active' };
        break;
      case 'progress': {
        // a number is BullMQ's percentage, an object jobwatch's progress object; anything else stays in extensions
        const { progress, extensions } = this.payloads.progress(entry.fields.data ?? 'null');
        change = { state: 'active', native: 'active', extensions };
        if (progress !== undefined) change.progress = progress;
        break;
      }
      case 'completed':
        change = { state: 'completed', native: 'completed', result: this.payloads.value(entry.fields.returnvalue) };
        break;
      case 'failed':
        change = { state: 'failed', native: 'failed', failed: true, error: entry.fields.failedReason };
        break;
      case 'stalled':
        change = { state: 'queued', native: 'waiting', extensions: { stalled: true, stalledAt: isoFromMs(atMs), stalledCount: known.stalledCount ?? null } };
        break;
      case 'removed':
        if (!PENDING_NATIVE.has(entry.fields.prev ?? '')) {
          this.facts.forget(queue, jobId); // a finished job cleaned up by retention: nothing changed for jobwatch
          return null;
        }
        change = { state: 'cancelled', native: 'removed', extensions: { removedFrom: entry.fields.prev } };
        break;
      default:
        this.ignored += 1;
        return null;
    }
    return this.jobEvent(queue, jobId, atMs, change, kind);
  }

  /** The attempt a change belongs to, counted from the events seen (the hash's counters move on before the agent reads them). */
  attemptFor(facts, state, kind) {
    if (kind === 'added') return 1; // a new job: whatever the hash, read later, has counted since
    if (state === 'active' && kind === 'active') {
      if (facts.nextAttempt !== undefined) return facts.nextAttempt;
      if (facts.attempt !== undefined) return facts.attempt;
      const made = facts.attemptsMade ?? 0;
      return facts.finishedOnMs !== undefined ? Math.max(1, made) : made + 1;
    }
    if (state === 'queued' || state === 'scheduled') return facts.nextAttempt ?? facts.attempt ?? (facts.attemptsMade ?? 0) + 1;
    if (facts.attempt !== undefined) return facts.attempt;
    return Math.max(1, facts.attemptsMade ?? 1);
  }

  jobEvent(queue, jobId, atMs, change, kind) {
    const before = this.facts.get(queue, jobId);
    const attempt = change.state === 'active' && kind === 'progress' ? (before.attempt ?? this.attemptFor(before, 'active', 'active')) : this.attemptFor(before, change.state, kind);
    /** @type {import('./job-facts.js').Facts & {attempt?: number, nextAttempt?: number, native?: string}} */
    const learned = { native: change.native, attempt };
    if (kind === 'active') {
      learned.startedAtMs = atMs;
      learned.nextAttempt = undefined;
    }
    if (change.state === 'retrying' || change.state === 'completed' || change.state === 'failed') learned.nextAttempt = attempt + 1;
    if (kind === 'stalled') learned.nextAttempt = attempt; // BullMQ runs the same attempt again
    const facts = this.facts.learn(queue, jobId, learned);
    if (learned.nextAttempt === undefined && kind === 'active') delete facts.nextAttempt;
    this.trackActive(queue, jobId, change.state, facts.processedBy);
    const job = {
      externalId: externalIdOf(queue, jobId),
      name: cutMarked(facts.name || UNKNOWN_NAME, NAME_CHARS),
      queue: cutMarked(queue, QUEUE_CHARS),
      state: change.state,
      attempt,
    };
    if (facts.attempts !== undefined) job.maxRetries = Math.max(0, facts.attempts - 1);
    if (change.progress !== undefined) job.progress = change.progress;
    const workerId = ['active', 'completed', 'failed', 'retrying'].includes(change.state) ? this.workerIdOf(queue, facts.processedBy) : undefined;
    if (workerId) job.workerId = cutMarked(workerId, WORKER_ID_CHARS);
    if (change.failed || change.error !== undefined) {
      const failure = failureOf(facts, attempt);
      job.error = cutMarked(change.error ?? failure.error, ERROR_CHARS);
      if (failure.stacktrace) job.stacktrace = cutMarked(failure.stacktrace, STACKTRACE_CHARS);
    }
    if (change.result !== undefined) job.result = change.result;
    this.addRead(queue, jobId, job);
    const createdAtMs = facts.addedAtMs ?? facts.createdAtMs;
    if (createdAtMs !== undefined) job.createdAt = isoFromMs(createdAtMs);
    const startedAtMs = facts.startedAtMs ?? facts.processedOnMs;
    if (['active', 'completed', 'failed', 'retrying'].includes(change.state) && startedAtMs !== undefined) job.startedAt = isoFromMs(startedAtMs);
    if (FINISHED.has(change.state)) job.completedAt = isoFromMs(atMs);
    const parent = parentExternalIdOf(facts.parentKey, this.prefix);
    if (parent !== undefined) job.parentExternalId = parent;
    job.extensions = this.extensions(jobId, facts, change);
    return this.envelope('job_state_change', atMs, 'job', job);
  }

  /** The data and log lines read for the job, on its first event of the batch: args (unless --omit-args names the job), result, logs. */
  addRead(queue, jobId, job) {
    const key = JobFacts.key(queue, jobId);
    const read = this.read.get(key);
    if (read === undefined) return;
    this.read.delete(key);
    if (this.payloads.sendsArgsOf(job.name)) {
      const args = this.payloads.value(read.data, read.dataBytes);
      if (args !== undefined) job.args = args;
    }
    if (job.result === undefined && job.state === 'completed') {
      const result = this.payloads.value(read.returnvalue, read.returnvalueBytes);
      if (result !== undefined) job.result = result;
    }
    if (read.logs && read.logs.lines.length > 0) job.logs = this.payloads.logLines(read.logs);
  }

  extensions(jobId, facts, change) {
    /** @type {Record<string, unknown>} */
    const extensions = { bullmqState: change.native, jobId };
    if (facts.priority) extensions.priority = facts.priority;
    if (facts.delayMs) extensions.delayMs = facts.delayMs;
    if (facts.attempts !== undefined) extensions.attempts = facts.attempts;
    if (facts.attemptsMade !== undefined) extensions.attemptsMade = facts.attemptsMade;
    if (facts.parentKey) extensions.parentKey = facts.parentKey;
    if (facts.schedulerId) extensions.schedulerId = facts.schedulerId;
    if (facts.processedBy) extensions.processedBy = facts.processedBy;
    // kept on every later event: jobwatch shows the latest extensions, and `eta` is its scheduledFor
    if (facts.etaMs !== undefined) extensions.eta = isoFromMs(facts.etaMs);
    // ids, names and progress are the app's: bounded, so no value of one job can get the event refused
    return boundJson({ ...extensions, ...(change.extensions ?? {}) });
  }

  trackActive(queue, jobId, state, processedBy) {
    let running = this.active.get(queue);
    if (state === 'active') {
      if (!running) this.active.set(queue, (running = new Map()));
      running.set(jobId, processedBy ?? '');
    } else if (running) {
      running.delete(jobId);
    }
  }

  /** Running jobs per worker name in a queue (jobs of unnamed workers under ''). @param {string} queue */
  runningByWorker(queue) {
    const counts = new Map();
    for (const name of this.active.get(queue)?.values() ?? []) counts.set(name, (counts.get(name) ?? 0) + 1);
    return counts;
  }

  envelope(type, atMs, key, payload) {
    return { type, timestamp: isoFromMs(atMs), framework: 'bullmq', connectionId: this.connectionId, [key]: payload };
  }
}

/**
 * The error and stack trace of a job's failed attempt. The hash keeps the newest failure's
 * reason, and a stack trace per failure (`Error: reason\n    at ...`): an agent reading the
 * hash after a later attempt ran (behind, or several attempts in one read) takes an earlier
 * attempt's from its own trace, its first line without the error's class.
 * @param {import('./job-facts.js').Facts} facts @param {number} attempt
 */
function failureOf(facts, attempt) {
  const traces = facts.stacktraces ?? [];
  const dropped = facts.tracesDropped ?? 0;
  const index = attempt - 1 - dropped;
  if (attempt >= traces.length + dropped || index < 0) return { error: facts.failedReason ?? '', stacktrace: facts.stacktrace };
  const trace = /** @type {string} */ (traces[index]);
  const firstLine = trace.split('\n', 1)[0] ?? '';
  return { error: firstLine.replace(/^[A-Za-z_$][\w$.]*: /, ''), stacktrace: trace };
}

/**
 * BullMQ adds a delayed job with "added" and then "delayed" (which carries when it runs) in
 * one script, so the two are adjacent in the stream; one scheduled event, the second's, says
 * both. Split across two reads, both are sent, and jobwatch keeps what each says.
 * @param {{fields: Record<string, string>}} entry @param {{fields: Record<string, string>} | undefined} next
 */
function isDelayedAdd(entry, next) {
  return entry.fields.event === 'added' && next?.fields.event === 'delayed' && next.fields.jobId === entry.fields.jobId;
}

/**
 * BullMQ's stall check writes "waiting (prev active)" and then "stalled" for a stalled job,
 * one right after the other in one script. Their ids need not share a millisecond (the
 * script can cross one on a busy Redis), so the pair is known by adjacency.
 * @param {{fields: Record<string, string>}} entry @param {{fields: Record<string, string>} | undefined} next
 */
function isStallMove(entry, next) {
  return entry.fields.event === 'waiting' && entry.fields.prev === 'active' && next?.fields.event === 'stalled' && next.fields.jobId === entry.fields.jobId;
}
