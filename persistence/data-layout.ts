/**
 * Where a data directory keeps its stores (log and snapshots), by how many shards wrote it
 * (docs/operations.md, "The data directory"):
 *
 *   DATA_DIR/log/                   no `shards.json`: one store with everything (every
 *                                   version before shards, and WORKERS=1 since)
 *   DATA_DIR/shards.json            {"format":1,"workers":W,"dir":"shards-<gen>"}, W > 1:
 *   DATA_DIR/shards-<gen>/accounts/ the accounts (users, sessions, connections)
 *   DATA_DIR/shards-<gen>/shard-<i>/ the connections of partition i of W
 *
 * A change of layout (WORKERS changed between restarts, src/shards/reshard.ts) writes the
 * new stores where nothing in force is (a directory of a new generation, or `log` while the
 * shards are in force), then puts them in force in one atomic step: `shards.json` replaced
 * by a rename, or removed for one store; then removes what the old layout used. A crash
 * before that step leaves the old layout in force and the new stores are removed as stale at
 * the next start; a crash after it, the old ones.
 */
import { join } from 'node:path';
import { invariant } from './invariant.ts';
import type { Storage } from './storage.ts';

export const LAYOUT_FILE = 'shards.json';
const LAYOUT_TEMP_FILE = 'shards.json.tmp';
const LAYOUT_FORMAT = 1;
const GENERATION_DIR = /^shards-(\d+)$/;
/** The store of the layout without `shards.json`. */
export const WHOLE_STORE_DIR = 'log';

export interface DataLayout {
  /** how many shards the stores are split for; 1: one store with everything, in `log` */
  workers: number;
  /** the directory of the shards' stores, in the data directory; null for one store (no `shards.json`) */
  dir: string | null;
}

/** The stores of a layout: one with everything, or the accounts' and one per shard. */
export type LayoutStores = { kind: 'whole'; store: string } | { kind: 'sharded'; accounts: string; shards: string[] };

export const LAYOUT_BEFORE_SHARDS: DataLayout = { workers: 1, dir: null };

export function layoutStores(dataDir: string, layout: DataLayout): LayoutStores {
  if (layout.dir === null) return { kind: 'whole', store: join(dataDir, WHOLE_STORE_DIR) };
  const base = join(dataDir, layout.dir);
  return { kind: 'sharded', accounts: join(base, 'accounts'), shards: Array.from({ length: layout.workers }, (_, i) => join(base, `shard-${i}`)) };
}

export class DataLayoutError extends Error {
  override name = 'DataLayoutError';
}

export async function readLayout(storage: Storage, dataDir: string): Promise<DataLayout> {
  const path = join(dataDir, LAYOUT_FILE);
  if (!(await storage.exists(path))) return LAYOUT_BEFORE_SHARDS;
  const bytes = await storage.readFile(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new DataLayoutError(`${path} cannot be read (${error instanceof Error ? error.message : String(error)}); it names where the stores are, and nothing was changed`);
  }
  const layout = parsed as { format?: unknown; workers?: unknown; dir?: unknown };
  if (layout.format !== LAYOUT_FORMAT || !Number.isSafeInteger(layout.workers) || (layout.workers as number) < 2 || typeof layout.dir !== 'string' || !GENERATION_DIR.test(layout.dir)) {
    throw new DataLayoutError(`${path} is not a layout this version knows (format ${String(layout.format)}); nothing was changed`);
  }
  return { workers: layout.workers as number, dir: layout.dir };
}

/** A directory for a new layout's stores: a generation after every one present. */
export async function nextLayoutDir(storage: Storage, dataDir: string): Promise<string> {
  let newest = 0;
  for (const name of await storage.list(dataDir)) {
    const match = GENERATION_DIR.exec(name);
    if (match !== null) newest = Math.max(newest, Number(match[1]));
  }
  return `shards-${newest + 1}`;
}

/**
 * Puts `layout` in force: for shards, `shards.json` written aside, synced, renamed over the
 * old one; for one store, `shards.json` removed. Then the directory is synced.
 */
export async function commitLayout(storage: Storage, dataDir: string, layout: DataLayout): Promise<void> {
  if (layout.dir === null) {
    invariant(layout.workers === 1, 'one store is the layout without a directory');
    const path = join(dataDir, LAYOUT_FILE);
    if (await storage.exists(path)) await storage.remove(path);
    await storage.fsyncDir(dataDir);
    return;
  }
  invariant(layout.workers > 1, 'a layout with a directory has shards');
  const temp = join(dataDir, LAYOUT_TEMP_FILE);
  if (await storage.exists(temp)) await storage.remove(temp);
  const file = await storage.openAppend(temp);
  try {
    await file.append(new TextEncoder().encode(JSON.stringify({ format: LAYOUT_FORMAT, workers: layout.workers, dir: layout.dir }) + '\n'));
    await file.datasync();
  } finally {
    await file.close();
  }
  await storage.rename(temp, join(dataDir, LAYOUT_FILE));
  await storage.fsyncDir(dataDir);
}

/**
 * What no layout in force uses: the stores of an older layout, a newer one that was never
 * put in force, a layout file left half written. Their files are removed (empty directories
 * stay; they are harmless). Returns the directories it emptied.
 */
export async function removeStaleStores(storage: Storage, dataDir: string, inForce: DataLayout): Promise<string[]> {
  const stale: string[] = [];
  for (const name of await storage.list(dataDir)) {
    const isGeneration = GENERATION_DIR.test(name);
    const isWhole = name === WHOLE_STORE_DIR && inForce.dir !== null;
    if ((isGeneration && name !== inForce.dir) || isWhole) {
      if (await removeFilesUnder(storage, join(dataDir, name))) stale.push(name);
    }
  }
  const temp = join(dataDir, LAYOUT_TEMP_FILE);
  if (await storage.exists(temp)) await storage.remove(temp);
  return stale;
}

/** Removes every file under `dir` (depth first); true when there was one. */
async function removeFilesUnder(storage: Storage, dir: string): Promise<boolean> {
  let removed = false;
  for (const name of await storage.list(dir)) {
    const path = join(dir, name);
    const isDirectory = await storage
      .list(path)
      .then(() => true)
      .catch(() => false);
    if (isDirectory) removed = (await removeFilesUnder(storage, path)) || removed;
    else {
      await storage.remove(path);
      removed = true;
    }
  }
  if (removed) await storage.fsyncDir(dir);
  return removed;
}
