/**
 * The live stream (`GET /api/events/stream`) for the whole page: one EventSource while
 * signed in. Events are collected and handed to listeners in batches every 250 ms, so a
 * burst of thousands of events costs one render, not thousands. EventSource reconnects
 * by itself with `Last-Event-ID`; when the browser gives up (an error status), we
 * reconnect after a pause with `?lastEventId=` so no event is lost, and an expired
 * session ends up at sign-in through the API client.
 */
import { signal } from '@preact/signals';
import { api } from './client.ts';
import type { CommandView, JobListItem, QueueStreamItem, WorkerView } from './types.ts';

export type StreamState = 'off' | 'connecting' | 'live' | 'reconnecting';

export interface LiveBatch {
  jobs: JobListItem[];
  workers: WorkerView[];
  queues: QueueStreamItem[];
  /** commands to the agents, when made and when their outcome arrives */
  commands: CommandView[];
  /** The server could not resume from our last event: refetch what is on screen. */
  reset: boolean;
}

type Listener = (batch: LiveBatch) => void;

const FLUSH_INTERVAL_MS = 250;
const RECONNECT_DELAY_MS = 3000;

export const streamState = signal<StreamState>('off');
const listeners = new Set<Listener>();
let source: EventSource | null = null;
let lastEventId: string | null = null;
let pending: LiveBatch = emptyBatch();
let flushTimer: ReturnType<typeof setTimeout> | null = null;
let reconnectTimer: ReturnType<typeof setTimeout> | null = null;

function emptyBatch(): LiveBatch {
  return { jobs: [], workers: [], queues: [], commands: [], reset: false };
}

export function onLive(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function queue(add: (batch: LiveBatch) => void, event: MessageEvent | Event): void {
  if (event instanceof MessageEvent && event.lastEventId !== '') lastEventId = event.lastEventId;
  add(pending);
  flushTimer ??= setTimeout(flush, FLUSH_INTERVAL_MS);
}

function flush(): void {
  flushTimer = null;
  const batch = pending;
  pending = emptyBatch();
  for (const listener of listeners) listener(batch);
}

export function startStream(): void {
  stopStream();
  const url = '/api/events/stream' + (lastEventId === null ? '' : `?lastEventId=${encodeURIComponent(lastEventId)}`);
  streamState.value = 'connecting';
  const events = new EventSource(url);
  source = events;
  events.onopen = () => {
    streamState.value = 'live';
  };
  events.onerror = () => {
    if (events.readyState === EventSource.CONNECTING) {
      streamState.value = 'reconnecting';
      return;
    }
    // closed for good (an error status): check the session, then try again
    streamState.value = 'reconnecting';
    events.close();
    reconnectTimer = setTimeout(() => {
      api('GET', '/api/auth/me').then(
        () => startStream(),
        () => undefined, // a 401 already sent the user to sign in; otherwise the next action retries
      );
    }, RECONNECT_DELAY_MS);
  };
  const parse = <T>(event: Event): T => JSON.parse((event as MessageEvent<string>).data) as T;
  events.addEventListener('job', (event) => queue((batch) => batch.jobs.push(parse<JobListItem>(event)), event));
  events.addEventListener('worker', (event) => queue((batch) => batch.workers.push(parse<WorkerView>(event)), event));
  events.addEventListener('queue', (event) => queue((batch) => batch.queues.push(parse<QueueStreamItem>(event)), event));
  events.addEventListener('command', (event) => queue((batch) => batch.commands.push(parse<CommandView>(event)), event));
  events.addEventListener('reset', (event) =>
    queue((batch) => {
      batch.reset = true;
    }, event),
  );
}

export function stopStream(): void {
  if (reconnectTimer !== null) clearTimeout(reconnectTimer);
  reconnectTimer = null;
  source?.close();
  source = null;
  streamState.value = 'off';
}

/** A stream covers the connections owned when it opened: reopen after creating one. */
export function restartStream(): void {
  if (source !== null) startStream();
}
