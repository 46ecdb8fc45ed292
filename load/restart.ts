/**
 * Restart time and the event-loop stall of a snapshot, measured from outside.
 *
 *   npx bun load/restart.ts --jobs 1000000
 *
 * Restart: SIGTERM (the server writes a snapshot while shutting down), then start again on
 * the same DATA_DIR and time from spawn until /api/health answers 200 and the log has
 * shown `recovered:`.
 *
 * Snapshot stall: the server snapshots while running when its log has grown by
 * SNAPSHOT_LOG_MB since the last snapshot (checked every 5 s; src/server.ts). The restart
 * above sets SNAPSHOT_LOG_MB=1, so after a few ingest batches (> 1 MiB of log) the next
 * check writes a snapshot of all jobs (20 batches of 1,000 events: about 3 MB of log). Meanwhile a tight loop of sequential
 * GET /api/health requests on one keep-alive connection records when each answer arrives;
 * the longest gap between two answers, from the end of that ingest until the
 * `snapshot at seq` line, is the stall. The longest gap in an idle second before is printed
 * as the reference (the loop's own noise).
 */
import { JobGenerator, jobsForEvents } from './events.ts';
import { buildEveryIndex, loadJobs, loadPhaseEnv, settledRss } from './reads.ts';
import { describeRestartProfile } from './restart-profile.ts';
import { serviceFromEnv, type RestartResult, type Service } from './service.ts';
import { fmtBytes, fmtCount, fmtMs, note, num, parseArgs, sleep } from './util.ts';

export interface StallResult {
  /** longest gap between health answers while the snapshot ran */
  maxGapMs: number;
  /** longest gap in an idle second before, the loop's own noise */
  idleMaxGapMs: number;
  healthAnswers: number;
  snapshotLine: string | null;
  /** what happened when the measurement was not possible */
  problem: string | null;
}

class HealthLoop {
  readonly arrivals: number[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(baseUrl: string) {
    this.done = (async () => {
      while (this.running) {
        try {
          const response = await fetch(`${baseUrl}/api/health`);
          await response.arrayBuffer();
        } catch {
          // a refused connection still marks time; the gap shows it
        }
        this.arrivals.push(performance.now());
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  maxGap(fromMs: number, toMs: number): number {
    let max = 0;
    for (let i = 1; i < this.arrivals.length; i++) {
      const at = this.arrivals[i]!;
      if (at < fromMs) continue;
      if (at > toMs) break;
      max = Math.max(max, at - this.arrivals[i - 1]!);
    }
    return max;
  }
}

/** Needs a service started (or restarted) with SNAPSHOT_LOG_MB=1 and no snapshot due yet. */
export async function measureSnapshotStall(service: Service, batches = 20): Promise<StallResult> {
  const loop = new HealthLoop(service.baseUrl);
  try {
    await sleep(1_000);
    const idleEnd = performance.now();
    const idleMaxGapMs = loop.maxGap(idleEnd - 1_000, idleEnd);
    const fromLine = service.logs.length;
    const generator = new JobGenerator(service.connectionId, jobsForEvents(1000) * batches, 60_000, Date.now());
    for (let i = 0; i < batches; i++) {
      const { body } = generator.nextBody(jobsForEvents(1000));
      const response = await fetch(`${service.baseUrl}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${service.apiKey}` },
        body,
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`snapshot stall: ingest answered HTTP ${response.status}`);
    }
    const ingestEnd = performance.now();
    let snapshotLine: string | null = null;
    try {
      snapshotLine = await service.waitForLog(/snapshot at seq/, 120_000, fromLine);
    } catch (error) {
      return { maxGapMs: Number.NaN, idleMaxGapMs, healthAnswers: loop.arrivals.length, snapshotLine: null, problem: String(error) };
    }
    const lineAt = performance.now();
    await sleep(100);
    return { maxGapMs: loop.maxGap(ingestEnd, lineAt + 100), idleMaxGapMs, healthAnswers: loop.arrivals.length, snapshotLine, problem: null };
  } finally {
    await loop.stop();
  }
}

export interface RestartMeasurement extends RestartResult {
  rssAfterRestart: number | null;
}

/** SIGTERM, start again on the same data directory (with SNAPSHOT_LOG_MB=1 for the stall measurement). */
export async function measureRestart(service: Service): Promise<RestartMeasurement> {
  const result = await service.restart({ SNAPSHOT_LOG_MB: '1' });
  await buildEveryIndex(service);
  const rssAfterRestart = await settledRss(service, 2_000);
  return { ...result, rssAfterRestart };
}

if (import.meta.main) {
  const args = parseArgs();
  const jobs = Math.round(num(args, 'jobs', 1_000_000));
  const service = await serviceFromEnv({ env: loadPhaseEnv(jobs), label: 'service' });
  try {
    const load = await loadJobs(service, jobs);
    note(`loaded ${fmtCount(jobs)} jobs in ${fmtMs(load.ms)}`);
    const rssLoaded = await settledRss(service);
    const restart = await measureRestart(service);
    console.log(`shutdown (SIGTERM to exit, with its snapshot): ${fmtMs(restart.shutdownMs)}${restart.snapshotLine !== null ? `  [${restart.snapshotLine}]` : ''}`);
    console.log(`restart with ${fmtCount(jobs)} jobs (spawn to /api/health 200 + recovered): ${fmtMs(restart.restartMs)}  [${restart.recoveredLine}]`);
    if (restart.profile !== null) console.log(`restart profile: ${describeRestartProfile(restart.profile)}`);
    console.log(`resident memory: after load ${fmtBytes(rssLoaded)}, after restart ${fmtBytes(restart.rssAfterRestart)}`);
    const stall = await measureSnapshotStall(service);
    if (stall.problem !== null) console.log(`snapshot stall: not measured: ${stall.problem}`);
    else console.log(`snapshot stall: longest gap between /api/health answers ${fmtMs(stall.maxGapMs)} (idle reference ${fmtMs(stall.idleMaxGapMs)}, ${stall.healthAnswers} answers)  [${stall.snapshotLine}]`);
  } finally {
    await service.cleanup();
  }
}
