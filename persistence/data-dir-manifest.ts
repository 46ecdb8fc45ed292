/**
 * `manifest.json` beside the log: what a data directory cannot tell from its own files
 * once one is gone.
 *
 * - `newestSegment`: the first seq of the newest log segment the writer created, written
 *   (and synced) before any record in that segment is acknowledged. Deleting the newest
 *   segment leaves a log that looks whole, only shorter; against the manifest its absence
 *   shows, and recovery refuses to start instead of losing its records without a word.
 * - `marks`: facts the engine asked to keep (`'accounts'` once a user exists), so that a
 *   directory whose users all vanished is not taken for a new one: a fresh admin with a
 *   one-time password over it, and the next snapshot, would make the loss permanent.
 *
 * Written whole to `manifest.tmp`, synced, renamed over `manifest.json`, and the directory
 * synced: it is always the old or the new one. A directory written by a version before the
 * manifest has none; recovery then checks nothing against it and the writer makes one.
 */
import { join } from 'node:path';
import type { Storage } from './storage.ts';

export const MANIFEST_FILE = 'manifest.json';
const MANIFEST_TEMP_FILE = 'manifest.json.new';
const MANIFEST_FORMAT = 1;

export interface DataDirManifest {
  format: number;
  /** first seq of the newest segment created; null before the first */
  newestSegment: number | null;
  marks: string[];
}

export type ManifestRead = { kind: 'ok'; manifest: DataDirManifest } | { kind: 'missing' } | { kind: 'corrupt'; reason: string };

export const EMPTY_MANIFEST: DataDirManifest = { format: MANIFEST_FORMAT, newestSegment: null, marks: [] };

export async function readManifest(storage: Storage, dir: string): Promise<ManifestRead> {
  const path = join(dir, MANIFEST_FILE);
  if (!(await storage.exists(path))) return { kind: 'missing' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await storage.readFile(path)));
  } catch (error) {
    return { kind: 'corrupt', reason: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const manifest = parsed as Partial<DataDirManifest> | null;
  const segmentOk = manifest?.newestSegment === null || (Number.isSafeInteger(manifest?.newestSegment) && manifest!.newestSegment! > 0);
  const marksOk = Array.isArray(manifest?.marks) && manifest.marks.every((mark) => typeof mark === 'string');
  if (manifest?.format !== MANIFEST_FORMAT || !segmentOk || !marksOk) {
    return { kind: 'corrupt', reason: `expected {"format":${MANIFEST_FORMAT},"newestSegment":<seq or null>,"marks":[<names>]}, found ${JSON.stringify(parsed).slice(0, 200)}` };
  }
  return { kind: 'ok', manifest: { format: MANIFEST_FORMAT, newestSegment: manifest.newestSegment!, marks: [...manifest.marks!] } };
}

/**
 * Keeps the manifest of one directory: every change is written and synced before its
 * promise resolves, one at a time, in call order.
 */
export class ManifestKeeper {
  private written: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly dir: string,
    private current: DataDirManifest,
  ) {}

  get manifest(): DataDirManifest {
    return this.current;
  }

  /** Records that the writer created the segment starting at `firstSeq`. */
  segmentCreated(firstSeq: number): Promise<void> {
    return this.change({ ...this.current, newestSegment: firstSeq });
  }

  /** Adds `mark` (once). */
  mark(mark: string): Promise<void> {
    if (this.current.marks.includes(mark)) return this.written;
    return this.change({ ...this.current, marks: [...this.current.marks, mark] });
  }

  /** Writes the manifest as it is (a directory that had none gets one). */
  save(): Promise<void> {
    return this.change(this.current);
  }

  private change(next: DataDirManifest): Promise<void> {
    this.current = next;
    const write = this.written.then(() => writeManifest(this.storage, this.dir, next));
    // a failed write fails its caller; the next change writes the whole manifest again
    this.written = write.catch(() => undefined);
    return write;
  }
}

async function writeManifest(storage: Storage, dir: string, manifest: DataDirManifest): Promise<void> {
  const temp = join(dir, MANIFEST_TEMP_FILE);
  if (await storage.exists(temp)) await storage.remove(temp);
  const file = await storage.openAppend(temp);
  try {
    await file.append(new TextEncoder().encode(`${JSON.stringify(manifest)}\n`));
    await file.datasync();
  } finally {
    await file.close();
  }
  await storage.rename(temp, join(dir, MANIFEST_FILE));
  await storage.fsyncDir(dir);
}
