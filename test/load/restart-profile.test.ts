/**
 * The bench's restart profile is read from the restarted service's log lines: recovery's
 * own total and phases, placed between the spawn and listening by the lines' arrival times.
 */
import { describe, expect, test } from 'bun:test';
import { describeRestartProfile, parsePhases, restartProfile } from '../../load/restart-profile.ts';

/** A restart's lines as the readable log prints them, each with the time it arrived (ms after an arbitrary origin). */
const LINES = [
  { atMs: 1_450, line: '[2026-11-25T23:01:32.693Z] INFO: recovered from snapshot /d/log/snapshot-1.snap (seq 12) and 3 log records in 1200 ms; last seq 15 {"snapshotSeq":12,"records":3,"durationMs":1200}' },
  { atMs: 1_451, line: '[2026-11-25T23:01:32.699Z] INFO: recovery phases: read 100 ms, sync 2 ms, decode 300 ms, restore 1,000 ms, lookups 90 ms, replay 3 ms {"phasesMs":{"read":100,"sync":2},"durationMs":1200}' },
  { atMs: 1_455, line: '[2026-11-25T23:01:32.709Z] INFO: recovered: snapshot seq 12, 3 records replayed in 1200 ms {"snapshotSeq":12}' },
  { atMs: 1_500, line: '[2026-11-25T23:01:33.826Z] INFO: listening on http://127.0.0.1:43757 (data in /d, fsync always) {"port":43757}' },
];

describe('the restart profile, read from the log lines of a start', () => {
  test('the phases line gives its named figures, thousands separators read, the fields after it left out', () => {
    expect(parsePhases(LINES[1]!.line)).toEqual([
      { name: 'read', ms: 100 },
      { name: 'sync', ms: 2 },
      { name: 'decode', ms: 300 },
      { name: 'restore', ms: 1000 },
      { name: 'lookups', ms: 90 },
      { name: 'replay', ms: 3 },
    ]);
    expect(parsePhases('listening on http://127.0.0.1:1')).toEqual([]);
  });

  test('the segments place recovery between the spawn and listening, and add up to spawn to serving', () => {
    const profile = restartProfile(LINES, 100, 1_520)!;
    expect(profile).toMatchObject({ beforeRecoveryMs: 150, recoveryMs: 1200, toListeningMs: 50, toHealthMs: 20, totalMs: 1_420 });
    expect(profile.beforeRecoveryMs + profile.recoveryMs + profile.toListeningMs + profile.toHealthMs).toBe(profile.totalMs);
    expect(describeRestartProfile(profile)).toBe(
      'spawn to recovery start 150 ms (runtime start, module load, config, data-directory lock); ' +
        'recovery 1.20 s (read 100 ms, sync 2 ms, decode 300 ms, restore 1,000 ms, lookups 90 ms, replay 3 ms); ' +
        'recovery to listening 50.0 ms (services, HTTP app); listening to /api/health 200 20.0 ms; spawn to serving 1.42 s',
    );
  });

  test('without the phases line (a service from before it) there is no profile rather than a wrong one', () => {
    expect(restartProfile(LINES.filter((_, at) => at !== 1), 100, 1_520)).toBeNull();
    expect(restartProfile(LINES.slice(1), 100, 1_520)).toBeNull();
    expect(restartProfile(LINES.slice(0, 3), 100, 1_520)).toBeNull();
  });
});
