/**
 * Where a restart's time goes, from outside the process: the restart target is "spawn to
 * serving", and a figure over it says nothing of what to cut. The service's own log lines
 * carry the rest: recovery logs its duration (`recovered from ... in T ms`) and its phases
 * (`recovery phases: read 120 ms, ...`), and the time each line reached this process places
 * recovery between the spawn and the `listening on` line.
 *
 * Line arrival times come through a pipe, so each segment is off by the pipe's latency (well
 * under a millisecond on an idle machine, more on a loaded one); the phases are the service's
 * own clock.
 */
import { fmtMs } from './util.ts';

export interface TimedLine {
  line: string;
  /** performance.now() of this process when the line arrived */
  atMs: number;
}

export interface RestartProfile {
  /** spawn until recovery began: the runtime starting, module loading, configuration, the data directory's lock */
  beforeRecoveryMs: number;
  recoveryMs: number;
  /** recovery's phases as the service logged them, in order */
  phases: Array<{ name: string; ms: number }>;
  /** recovery's end until the `listening on` line: the services, the HTTP app, listening */
  toListeningMs: number;
  /** the `listening on` line until /api/health answered 200 */
  toHealthMs: number;
  totalMs: number;
}

const RECOVERED = /recovered from .* in (\d+) ms; last seq \d+/;
const PHASES = /recovery phases: ([^{]*)/;
const PHASE = /([a-z][a-z ]*?) ([\d,]+) ms/g;
const LISTENING = /listening on http:/;

/** `read 120 ms, decode 1,200 ms` as named figures; whatever follows the sentence (a pretty line's fields) is left out. */
export function parsePhases(line: string): Array<{ name: string; ms: number }> {
  const sentence = PHASES.exec(line)?.[1];
  if (sentence === undefined) return [];
  return [...sentence.matchAll(PHASE)].map((match) => ({ name: match[1]!, ms: Number(match[2]!.replace(/,/g, '')) }));
}

/**
 * The profile of one start, from its lines (those after the spawn), the spawn's time and the
 * time /api/health first answered 200; null when a line it needs is missing (a service of a
 * version before the phases line, or one attached to rather than started).
 */
export function restartProfile(lines: readonly TimedLine[], spawnedAtMs: number, healthyAtMs: number): RestartProfile | null {
  const recovered = lines.find((timed) => RECOVERED.test(timed.line));
  const phasesLine = lines.find((timed) => PHASES.test(timed.line));
  const listening = lines.find((timed) => LISTENING.test(timed.line));
  if (recovered === undefined || phasesLine === undefined || listening === undefined) return null;
  const recoveryMs = Number(RECOVERED.exec(recovered.line)![1]);
  return {
    beforeRecoveryMs: Math.max(0, recovered.atMs - recoveryMs - spawnedAtMs),
    recoveryMs,
    phases: parsePhases(phasesLine.line),
    toListeningMs: Math.max(0, listening.atMs - recovered.atMs),
    toHealthMs: Math.max(0, healthyAtMs - listening.atMs),
    totalMs: healthyAtMs - spawnedAtMs,
  };
}

/** One sentence: the segments in the order they happen, recovery's phases inside its own. */
export function describeRestartProfile(profile: RestartProfile): string {
  const phases = profile.phases.map((phase) => `${phase.name} ${phase.ms.toLocaleString('en-US')} ms`).join(', ');
  return (
    `spawn to recovery start ${fmtMs(profile.beforeRecoveryMs)} (runtime start, module load, config, data-directory lock); ` +
    `recovery ${fmtMs(profile.recoveryMs)} (${phases}); ` +
    `recovery to listening ${fmtMs(profile.toListeningMs)} (services, HTTP app); ` +
    `listening to /api/health 200 ${fmtMs(profile.toHealthMs)}; spawn to serving ${fmtMs(profile.totalMs)}`
  );
}

/**
 * What touching fresh memory costs on this machine, in ms per MiB: a restarted service must
 * fault in every page of its resident set once, so that set times this is a floor under the
 * restart no code change below the memory target removes. In a VM a page fault can cost
 * 10-15 us (3-4 ms per MiB), against well under 1 ms per MiB on bare metal.
 */
export function firstTouchMsPerMiB(mib = 64): number {
  const startedAtMs = performance.now();
  const bytes = new Uint8Array(mib * 1024 * 1024);
  for (let at = 0; at < bytes.length; at += 4096) bytes[at] = 1;
  return (performance.now() - startedAtMs) / mib;
}
