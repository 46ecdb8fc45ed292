/**
 * The commands this page asked for, until their outcome is known: each is shown as a toast
 * (components/command-toasts.tsx) that says it was requested and then what the agent
 * reported. Outcomes arrive on the live stream (`command` events); while the stream is not
 * live, the pending ones are asked for every few seconds.
 */
import { signal } from '@preact/signals';
import { COMMAND_VERBS } from '../../../actors/connection/command-types.ts';
import { api } from '../api/client.ts';
import { onLive, streamState } from '../api/stream.ts';
import type { CommandAccepted, CommandView } from '../api/types.ts';

export interface TrackedCommand {
  /** the toast's key: the command's id, or a local one for an answer without a command */
  key: string;
  /** what was asked, in words ("Pause emails") */
  label: string;
  /** the command as last heard of; null until the stream or a poll says (then it is pending) */
  command: CommandView | null;
  /** said instead of an outcome, for an answer without a command to follow (retries asked one per job) */
  note: string | null;
}

const POLL_MS = 3000;
const TRACKED_MAX = 6;

export const tracked = signal<TrackedCommand[]>([]);
let pollTimer: ReturnType<typeof setInterval> | null = null;

export function track(label: string, accepted: CommandAccepted, known: CommandView | null = null): void {
  const note = accepted.commandId === null ? `${accepted.retriesRequested ?? 0} retries requested, one per failed job: each job shows its own` : null;
  const entry: TrackedCommand = { key: accepted.commandId ?? `local-${Date.now()}`, label, command: known, note };
  tracked.value = [entry, ...tracked.value.filter((each) => each.key !== entry.key)].slice(0, TRACKED_MAX);
  pollTimer ??= setInterval(pollPending, POLL_MS);
}

export function dismiss(key: string): void {
  tracked.value = tracked.value.filter((each) => each.key !== key);
}

function update(command: CommandView): void {
  if (!tracked.value.some((each) => each.key === command.id)) return;
  tracked.value = tracked.value.map((each) => (each.key === command.id ? { ...each, command } : each));
}

onLive((batch) => {
  for (const command of batch.commands) update(command);
});

async function pollPending(): Promise<void> {
  const pending = tracked.value.filter((each) => each.note === null && (each.command === null || each.command.status === 'pending'));
  if (pending.length === 0 && pollTimer !== null) {
    clearInterval(pollTimer);
    pollTimer = null;
    return;
  }
  if (streamState.value === 'live') return;
  for (const each of pending) {
    await api<CommandView>('GET', `/api/commands/${encodeURIComponent(each.key)}`).then(update, () => undefined);
  }
}

/** The outcome in words, details included ("done: removed 1,204, completed 1,200"). */
export function outcomeText(command: CommandView): string {
  switch (command.status) {
    case 'pending':
      return 'requested, waiting for the agent';
    case 'done':
      return `done${detailsText(command)}`;
    case 'failed':
      return `failed: ${command.reason ?? 'no reason given'}`;
    case 'unsupported':
      return `not supported: ${command.reason ?? 'no reason given'}`;
    case 'expired':
      return 'no answer from the agent within the wait';
  }
}

function detailsText(command: CommandView): string {
  const shown = Object.entries(command.details ?? {}).filter(([, value]) => typeof value === 'number' || typeof value === 'string');
  if (shown.length === 0) return '';
  return ` (${shown.map(([key, value]) => `${key} ${typeof value === 'number' ? value.toLocaleString() : value}`).join(', ')})`;
}

/** "Pause", "Run now": the command's verb with a capital. */
export function verbOf(type: CommandView['type']): string {
  const verb = COMMAND_VERBS[type];
  return verb.charAt(0).toUpperCase() + verb.slice(1);
}
