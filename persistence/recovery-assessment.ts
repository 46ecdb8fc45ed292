import { join } from 'node:path';
import { EMPTY_MANIFEST, MANIFEST_FILE, readManifest, type DataDirManifest } from './data-dir-manifest.ts';
import { parseDataFileName, segmentFileName } from './file-names.ts';
import { assessLog, scanSegment } from './log-scan.ts';
import type { LogAssessment, SegmentFile, SegmentScan } from './log-scan.ts';
import type { SnapshotCondition } from './recovery-decisions.ts';
import { readSnapshotFile } from './snapshot-file.ts';
import type { Storage } from './storage.ts';

/**
 * The judging half of recovery: what is in the data directory, which snapshot
 * recovery can start from, and what the log looks like from there. Reads only.
 */
export interface SnapshotFile {
  name: string;
  path: string;
  seq: number;
}

export interface DataDirInventory {
  dir: string;
  /** Oldest first. */
  segments: SegmentFile[];
  /** Newest first. */
  snapshots: SnapshotFile[];
  /** Paths of snapshot-*.tmp files: writes that never finished. */
  unfinishedSnapshots: string[];
}

export interface RecoveryBase {
  seq: number;
  /** The snapshot file, none for an empty state. */
  path?: string;
  /** For log lines: "snapshot <path>" or "an empty state". */
  description: string;
  chunkPayloads: Uint8Array[];
  /** where each chunk's frame starts in the file */
  chunkOffsets: number[];
}

export interface RecoveryAssessment {
  snapshot: SnapshotCondition;
  log: LogAssessment;
  /** Where replay starts when the decision is to replay. */
  base: RecoveryBase;
  /** The directory's manifest (an empty one when it has none yet). */
  manifest: DataDirManifest;
}

const EMPTY_STATE: RecoveryBase = { seq: 0, description: 'an empty state', chunkPayloads: [], chunkOffsets: [] };

export async function takeInventory(storage: Storage, dir: string): Promise<DataDirInventory> {
  const inventory: DataDirInventory = { dir, segments: [], snapshots: [], unfinishedSnapshots: [] };
  for (const name of await storage.list(dir)) {
    const parsed = parseDataFileName(name);
    if (!parsed) continue;
    const path = join(dir, name);
    if (parsed.kind === 'segment') inventory.segments.push({ name, path, firstSeq: parsed.seq });
    if (parsed.kind === 'snapshot') inventory.snapshots.push({ name, path, seq: parsed.seq });
    if (parsed.kind === 'snapshot-temp') inventory.unfinishedSnapshots.push(path);
  }
  inventory.segments.sort((a, b) => a.firstSeq - b.firstSeq);
  inventory.snapshots.sort((a, b) => b.seq - a.seq);
  return inventory;
}

/**
 * Judges the directory: its snapshot and log (below), then the log against the manifest,
 * which names the newest segment the writer made: a log that ends before it lost that
 * segment, and every record acknowledged in it, though what is left looks whole.
 */
export async function assessDataDir(
  storage: Storage,
  inventory: DataDirInventory,
  say: (line: string) => void,
): Promise<RecoveryAssessment> {
  const dir = inventory.dir;
  const manifestRead = await readManifest(storage, dir);
  const manifest = manifestRead.kind === 'ok' ? manifestRead.manifest : EMPTY_MANIFEST;
  const assessment = { ...(await assessFiles(storage, inventory, say)), manifest };
  if (assessment.log.condition === 'corrupt') return assessment;
  if (manifestRead.kind === 'corrupt') {
    const path = join(dir, MANIFEST_FILE);
    return {
      ...assessment,
      log: {
        condition: 'corrupt',
        problem: `${path} is damaged: ${manifestRead.reason}`,
        remedy: `restore it from a backup, or remove it (this start then cannot tell whether the newest log segment or every account went missing)`,
      },
    };
  }
  const expected = manifest.newestSegment;
  const newest = inventory.segments.at(-1);
  if (expected !== null && (newest === undefined || newest.firstSeq < expected)) {
    const path = join(dir, segmentFileName(expected));
    return {
      ...assessment,
      log: {
        condition: 'corrupt',
        problem:
          `the newest log segment ${path} is missing: ${join(dir, MANIFEST_FILE)} names it as the last one the log began, ` +
          `so the records it held (from seq ${expected} on) were acknowledged and are gone`,
        remedy: `restore ${path} from a backup; or, to accept losing whatever it held, create it empty (touch ${path}) and start again`,
      },
    };
  }
  return assessment;
}

async function assessFiles(storage: Storage, inventory: DataDirInventory, say: (line: string) => void): Promise<Omit<RecoveryAssessment, 'manifest'>> {
  const scans = new Map<string, Promise<SegmentScan>>();
  const scan = (segment: SegmentFile): Promise<SegmentScan> => {
    let result = scans.get(segment.path);
    if (!result) {
      result = scanSegment(storage, segment);
      scans.set(segment.path, result);
    }
    return result;
  };
  const judgeLogFrom = (seq: number) => assessLog(inventory.segments, seq, scan);

  const [newest, ...older] = inventory.snapshots;
  if (!newest) return { snapshot: 'missing', log: await judgeLogFrom(0), base: EMPTY_STATE };

  const newestRead = await readSnapshotFile(storage, newest.path, newest.seq);
  if (newestRead.kind === 'ok') {
    const base = { seq: newest.seq, path: newest.path, description: `snapshot ${newest.path}`, chunkPayloads: newestRead.chunkPayloads, chunkOffsets: newestRead.chunkOffsets };
    return { snapshot: 'ok', log: await judgeLogFrom(newest.seq), base };
  }

  say(`snapshot ${newest.path} is corrupt (${newestRead.reason}); looking for an older snapshot or a complete log to recover from`);
  let whyNoFallback = '';
  for (const candidate of [...older, undefined]) {
    const base = candidate ? await readBase(storage, candidate, say) : EMPTY_STATE;
    if (!base) continue;
    const log = await judgeLogFrom(base.seq);
    if (log.condition === 'corrupt') {
      whyNoFallback = `from ${base.description}: ${log.problem}`;
    } else if (log.lastLogSeq < newest.seq) {
      whyNoFallback = `from ${base.description} the log reaches only seq ${log.lastLogSeq}`;
    } else {
      say(`falling back to ${base.description} and the log after it, which reaches seq ${log.lastLogSeq}`);
      return { snapshot: 'corrupt', log, base };
    }
  }
  const log: LogAssessment = {
    condition: 'corrupt',
    problem:
      `snapshot ${newest.path} is corrupt (${newestRead.reason}) and nothing holds every record up to its seq ${newest.seq} ` +
      `(${whyNoFallback})`,
    remedy: `restore ${newest.path} from a backup, or move the whole data directory aside to start empty`,
  };
  return { snapshot: 'corrupt', log, base: EMPTY_STATE };
}

async function readBase(storage: Storage, snapshot: SnapshotFile, say: (line: string) => void): Promise<RecoveryBase | undefined> {
  const read = await readSnapshotFile(storage, snapshot.path, snapshot.seq);
  if (read.kind === 'ok') return { seq: snapshot.seq, path: snapshot.path, description: `snapshot ${snapshot.path}`, chunkPayloads: read.chunkPayloads, chunkOffsets: read.chunkOffsets };
  say(`older snapshot ${snapshot.path} is corrupt too (${read.reason}); skipping it`);
  return undefined;
}
