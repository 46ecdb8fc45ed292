/**
 * The recovery decision table: every combination of snapshot and log state has one
 * written-down decision. Recovery first judges the two halves of a data directory, then looks
 * up exactly one decision here; recovery.ts only carries
 * decisions out, and the decision-table test walks every cell.
 *
 *   snapshot \ log  | clean                     | torn                                | corrupt
 *   ----------------+---------------------------+-------------------------------------+--------
 *   ok              | load it, replay the log   | cut the tail, load it, replay       | refuse
 *   missing         | replay the log from seq 1 | cut the tail, replay from seq 1     | refuse
 *   corrupt         | fall back, replay         | cut the tail, fall back, replay     | refuse
 *
 * Terms:
 * - snapshot ok / missing / corrupt: the newest snapshot-*.snap verifies / there is
 *   none / it fails verification (a checksum, a frame, the header or the trailer).
 * - log, judged from the snapshot recovery starts from: clean = every needed record is
 *   intact and in sequence; torn = the same, except that the newest segment ends in a
 *   short read, checksum mismatch or bad magic with no intact frame after it (a write
 *   cut short by a crash); corrupt = any other damage: an older segment, the middle of
 *   a segment, a sequence gap, a missing segment, or (without a snapshot) a log that
 *   does not start at seq 1.
 * - fall back: to the newest older snapshot that verifies and whose log is complete
 *   through the corrupt snapshot's seq, else to an empty state when the log from seq 1
 *   is; when neither exists the log counts as corrupt for this row, so the cell is
 *   "refuse".
 * - refuse: throw RecoveryRefusedError naming the file and the operator's options;
 *   nothing in the directory is changed.
 */
export type SnapshotCondition = 'ok' | 'missing' | 'corrupt';
export type LogCondition = 'clean' | 'torn' | 'corrupt';

export type RecoveryDecision =
  | {
      action: 'replay';
      /** What state replay starts from. */
      base: 'newest-snapshot' | 'empty-state' | 'fallback';
      cutTornTail: boolean;
    }
  | { action: 'refuse' };

const REFUSE: RecoveryDecision = { action: 'refuse' };

export const RECOVERY_DECISIONS: Readonly<Record<SnapshotCondition, Readonly<Record<LogCondition, RecoveryDecision>>>> = {
  ok: {
    clean: { action: 'replay', base: 'newest-snapshot', cutTornTail: false },
    torn: { action: 'replay', base: 'newest-snapshot', cutTornTail: true },
    corrupt: REFUSE,
  },
  missing: {
    clean: { action: 'replay', base: 'empty-state', cutTornTail: false },
    torn: { action: 'replay', base: 'empty-state', cutTornTail: true },
    corrupt: REFUSE,
  },
  corrupt: {
    clean: { action: 'replay', base: 'fallback', cutTornTail: false },
    torn: { action: 'replay', base: 'fallback', cutTornTail: true },
    corrupt: REFUSE,
  },
};
