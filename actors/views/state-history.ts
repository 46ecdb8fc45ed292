/**
 * The served `stateHistory`: the job's states (runs of one state collapsed into their
 * earliest entry) and what became of its revokes and retries, in time order. A request
 * marks the state entry it made ("revoke requested" on the `cancelled` it shows); one that
 * did not happen has no state entry (it was withdrawn), so its request, and its refusal or
 * expiry, are entries of their own, each with the state the job system reported then. A
 * command that makes no state entry (run now, delete, kill, a retry of a job waiting to
 * retry) has its request and its outcome as entries of their own.
 */
import { stateEntryOf, type CommandOutcome } from '../connection/command-outcomes.ts';
import { doneNote, requestNote, unfulfilledNote } from '../connection/job-actions.ts';
import type { HistoryEntry } from '../connection/job-record.ts';

export interface StateHistoryEntry {
  state: string;
  timestamp: string;
  /** on a command's entries: "revoke requested", "revoke refused: <reason>", "retry expired unconfirmed", "run now done" */
  note?: string;
}

interface Note {
  atMs: number;
  note: string;
  /** the state entry the note belongs on, when it is there */
  marks: { state: string; atMs: number } | null;
}

export function servedStateHistory(states: readonly HistoryEntry[], commands: readonly CommandOutcome[]): StateHistoryEntry[] {
  const served: Array<StateHistoryEntry & { atMs: number }> = states.map((entry) => ({ state: entry.state, timestamp: iso(entry.atMs), atMs: entry.atMs }));
  for (const { atMs, note, marks } of commands.flatMap(notesOf)) {
    const marked = marks === null ? undefined : served.find((entry) => entry.note === undefined && entry.atMs === marks.atMs && entry.state === marks.state);
    if (marked !== undefined) {
      marked.note = note;
      continue;
    }
    // after every entry up to its time: the state then is the one before it
    let index = served.length;
    while (index > 0 && served[index - 1]!.atMs > atMs) index--;
    const state = states.findLast((entry) => entry.atMs <= atMs)?.state ?? states[0]?.state ?? 'unknown';
    served.splice(index, 0, { state, timestamp: iso(atMs), atMs, note });
  }
  return served.map(({ state, timestamp, note }) => (note === undefined ? { state, timestamp } : { state, timestamp, note }));
}

function notesOf(command: CommandOutcome): Note[] {
  const { status } = command;
  const entry = stateEntryOf(command);
  const standing = status === 'pending' || status === 'done';
  const requested: Note = { atMs: command.entryAtMs, note: requestNote(command.type), marks: standing && entry !== null ? { state: entry, atMs: command.entryAtMs } : null };
  const settledAtMs = command.completedAtMs ?? command.entryAtMs;
  if (status === 'pending') return [requested];
  if (status === 'done') return entry === null ? [requested, { atMs: settledAtMs, note: doneNote(command.type), marks: null }] : [requested];
  return [requested, { atMs: settledAtMs, note: unfulfilledNote(command.type, status, command.reason), marks: null }];
}

function iso(atMs: number): string {
  return new Date(atMs).toISOString();
}
