/**
 * Duplicate keys: the decisions' identity of an event (job: externalId, state, timestamp,
 * attempt; worker: externalId, state, timestamp; queue: name, timestamp) plus a fingerprint
 * of everything else the event says. An exact repeat (an agent sending a batch again) has
 * the same key and is skipped; an event of the same identity that says something more or
 * else (BullMQ writes a delayed job's `added` and `delayed` entries in one millisecond, and
 * only the second carries `extensions.eta`) has another key and is applied, where the
 * merge rules decide what it changes. Timestamps are in milliseconds so `...00Z` and
 * `...00.000Z` are the same event. Built with template strings: this runs for every event
 * (decide; replay again), and Array#join was a measurable share of ingest.
 */
import { jsonText } from './event-bytes.ts';
import type { JobEvent, NormalizedEvent, QueueEvent, WorkerEvent } from './normalized-event.ts';

export function dedupKeyOf(event: NormalizedEvent): string {
  switch (event.kind) {
    case 'job':
      return `j\u0000${event.externalId}\u0000${event.state}\u0000${event.atMs}\u0000${event.attempt ?? ''}\u0000${fingerprint(jobContent(event))}`;
    case 'worker':
      return `w\u0000${event.externalId}\u0000${event.state}\u0000${event.atMs}\u0000${fingerprint(workerContent(event))}`;
    case 'queue':
      return `q\u0000${event.name}\u0000${event.atMs}\u0000${fingerprint(queueContent(event))}`;
  }
}

/** A field as it enters the content: absent and empty differ (U+0001 cannot be confused with a value's end, U+0000 separates). */
function field(value: string | number | undefined): string {
  return value === undefined ? '\u0001' : `${value}`;
}

function jobContent(event: JobEvent): string {
  return (
    `${event.framework}\u0000${event.name}\u0000${field(event.queue)}\u0000${field(event.workerId)}\u0000${field(event.maxRetries)}` +
    `\u0000${field(event.progress)}\u0000${field(event.createdAtMs)}\u0000${field(event.startedAtMs)}\u0000${field(event.completedAtMs)}` +
    `\u0000${field(event.error)}\u0000${field(event.stacktrace)}\u0000${event.extensions === undefined ? '\u0001' : jsonText(event.extensions)}`
  );
}

function workerContent(event: WorkerEvent): string {
  return (
    `${event.framework}\u0000${event.hostname}\u0000${field(event.pid)}\u0000${field(event.concurrency)}\u0000${field(event.activeJobs)}` +
    `\u0000${event.queues === undefined ? '\u0001' : event.queues.join('\u0002')}\u0000${event.metadata === undefined ? '\u0001' : jsonText(event.metadata)}`
  );
}

function queueContent(event: QueueEvent): string {
  return `${event.framework}\u0000${event.depth}\u0000${field(event.consumers)}\u0000${event.extensions === undefined ? '\u0001' : jsonText(event.extensions)}`;
}

/** 64 bits of wyhash in base 36: two different contents under one identity collide once in ~10^19. */
function fingerprint(content: string): string {
  return Bun.hash.wyhash(content).toString(36);
}
