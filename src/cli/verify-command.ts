/**
 * `verify`: reads a data directory as a start would, without starting and without
 * changing anything (no lock taken, no torn tail cut, no file written), and says whether a
 * start would recover everything: every snapshot chunk and log record decoded and checked
 * for its shape (and applied to a state in memory), the log against the manifest, the
 * accounts against its mark. Exit code 0: a start recovers everything listed; 1: it would
 * refuse, and the report says where and why.
 */
import { existsSync } from 'node:fs';
import { systemClock } from '../../actors/clock.ts';
import { Engine } from '../../actors/engine.ts';
import { readManifest } from '../../persistence/data-dir-manifest.ts';
import { layoutStores, readLayout, LAYOUT_BEFORE_SHARDS } from '../../persistence/data-layout.ts';
import { lockHolder } from '../../persistence/data-dir-lock.ts';
import { RecoveryRefusedError } from '../../persistence/errors.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName } from '../../persistence/file-names.ts';
import { recoverDataDir } from '../../persistence/recovery.ts';
import { lostAccountsProblem } from '../accounts-kept.ts';
import type { Config } from '../config.ts';
import { engineRecoveryHandler } from '../engine-recovery.ts';
import { engineLimitsOf } from '../open-engine.ts';
import type { Flags } from './commands.ts';

export const VERIFY_USAGE = `  verify [--data-dir DIR] [--json]
      reads DIR (default DATA_DIR) as a start would, changing nothing; exit 0 when a start
      recovers everything, 1 when it would refuse (the report says where and why)`;

export interface VerifyReport {
  ok: boolean;
  dataDir: string;
  /** what recovery read and would do, in order */
  lines: string[];
  /** why a start would refuse; null when it would not */
  problem: string | null;
  holds: { users: number; connections: number; jobs: number; alertRules: number; lastSeq: number } | null;
  manifest: string;
  lock: string;
}

export async function verifyCommand(config: Config, flags: Flags): Promise<{ text: string; exitCode: number }> {
  const dataDir = typeof flags['data-dir'] === 'string' ? flags['data-dir'] : config.dataDir;
  const report = await verifyDataDir(dataDir, config);
  return { text: flags.json === true ? JSON.stringify(report, null, 2) : describeReport(report), exitCode: report.ok ? 0 : 1 };
}

export async function verifyDataDir(dataDir: string, config: Config): Promise<VerifyReport> {
  const layout = existsSync(dataDir) ? await readLayout(new FileStorage(), dataDir).catch(() => LAYOUT_BEFORE_SHARDS) : LAYOUT_BEFORE_SHARDS;
  const stores = layoutStores(dataDir, layout);
  // with shards the accounts' store is what says whether the directory held accounts
  const logDir = stores.kind === 'whole' ? stores.store : stores.accounts;
  const report: VerifyReport = { ok: false, dataDir, lines: [], problem: null, holds: null, manifest: '', lock: describeLock(dataDir) };
  if (!existsSync(dataDir)) {
    report.problem = `there is no data directory at ${dataDir}`;
    return report;
  }
  const storage = new FileStorage();
  const manifest = existsSync(logDir) ? await readManifest(storage, logDir) : { kind: 'missing' as const };
  report.manifest =
    manifest.kind === 'ok'
      ? `newest segment ${manifest.manifest.newestSegment === null ? 'none yet' : segmentFileName(manifest.manifest.newestSegment)}; marks: ${manifest.manifest.marks.join(', ') || 'none'}`
      : manifest.kind === 'missing'
        ? 'none (a directory of a version before it, or never started): the next start writes one'
        : `damaged: ${manifest.reason}`;
  if (!existsSync(logDir)) {
    report.ok = true;
    report.lines.push(`${logDir} does not exist: a start begins a new installation`);
    return report;
  }
  const engine = new Engine({ clock: systemClock, log: { append: () => Promise.reject(new Error('verify appends nothing')) }, limits: engineLimitsOf(config) });
  const read = (dir: string, wholeState: boolean) =>
    recoverDataDir({
      dir,
      storage,
      handler: engineRecoveryHandler(engine, { wholeState }),
      dryRun: true,
      log: (line) => {
        if (!line.startsWith('recovery phases:')) report.lines.push(line);
      },
    });
  try {
    const recovered = await read(logDir, true);
    let lastSeq = recovered.lastSeq;
    if (stores.kind === 'sharded') {
      // each shard's store on top of the accounts, as a start with this many shards reads them
      report.lines.push(`${stores.shards.length} shards (${layout.dir}), each a store of its own:`);
      const restorer = engine.restorer();
      restorer.reconcileWithAccounts({ drop: false });
      for (const dir of stores.shards) lastSeq += (await read(dir, false)).lastSeq;
      restorer.reconcileWithAccounts();
    }
    report.holds = holdingsOf(engine, lastSeq);
    report.problem = lostAccountsProblem(engine, recovered.manifest.marks);
  } catch (error) {
    if (!(error instanceof RecoveryRefusedError)) throw error;
    report.problem = error.message;
  }
  report.ok = report.problem === null;
  return report;
}

function holdingsOf(engine: Engine, lastSeq: number): NonNullable<VerifyReport['holds']> {
  let jobs = 0;
  let alertRules = 0;
  for (const id of engine.connectionIds()) {
    const actor = engine.connection(id)!;
    jobs += actor.jobs.size;
    alertRules += actor.alerts.rules.size;
  }
  return { users: engine.accounts.users.size, connections: engine.accounts.connections.size, jobs, alertRules, lastSeq };
}

function describeLock(dataDir: string): string {
  const holder = existsSync(dataDir) ? lockHolder(dataDir) : undefined;
  if (holder === undefined) return 'free: no service is running on it';
  return `held by a running service (pid ${holder}): the newest segment may grow while this reads it, and a torn tail may be a write in progress`;
}

function describeReport(report: VerifyReport): string {
  const count = (n: number, what: string): string => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;
  const holds = report.holds;
  return [
    `data directory ${report.dataDir} (read only: nothing was changed)`,
    ...report.lines.map((line) => `  ${line}`),
    `manifest: ${report.manifest || 'not read'}`,
    `lock: ${report.lock}`,
    ...(holds === null ? [] : [`holds: ${count(holds.users, 'user')}, ${count(holds.connections, 'connection')}, ${count(holds.jobs, 'job')}, ${count(holds.alertRules, 'alert rule')}; last seq ${holds.lastSeq}`]),
    report.ok ? 'OK: a start recovers everything above' : `DAMAGED: a start would refuse.\n${report.problem}`,
  ].join('\n');
}
