/**
 * Everything under the data directory is the service's alone: the log and snapshots hold
 * password hashes, session HMACs, API-key hashes and every tenant's jobs. Files are
 * created 0600 and directories 0700 whatever the process umask (a umask of 000 or 022
 * must not make them group- or world-readable), and at start the tree is tightened, so a
 * data directory written by an older version (0644 files, 0755 directories) is fixed.
 */
import { chmod, lstat, mkdir, open, readdir } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;
/** group and other bits: none may be set under the data directory */
const SHARED_BITS = 0o077;

/**
 * `mkdir -p` with 0700 for every directory it creates (the leaf set exactly, whatever
 * the umask). An existing directory is left as it is: the tightening at start fixes ours.
 */
export async function mkdirPrivate(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (created !== undefined) await chmod(dir, PRIVATE_DIR_MODE);
}

/** Opens (creating if absent) a file that is 0600 afterwards, whatever the umask and whatever it was. */
export async function openPrivate(path: string, flags: 'a' | 'w'): Promise<FileHandle> {
  const handle = await open(path, flags, PRIVATE_FILE_MODE);
  // Stryker disable next-line BlockStatement,ArrowFunction: fchmod of a file this process just opened fails only on a file of another owner (never as root, so no test can stage it); closing is what keeps the handle from leaking then
  await handle.chmod(PRIVATE_FILE_MODE).catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  return handle;
}

export interface ModeChange {
  path: string;
  fromMode: number;
  toMode: number;
}

export interface Tightening {
  changed: ModeChange[];
  /** paths whose mode could not be changed (not ours, say), with the reason */
  failed: Array<{ path: string; reason: string }>;
}

/**
 * Removes the group and other bits of `root` and of everything under it (0644 -> 0600,
 * 0755 -> 0700). Symbolic links are neither followed nor changed. A missing root is no
 * change; a path that cannot be changed is reported, not thrown: the service still starts.
 */
export async function tightenPrivateTree(root: string): Promise<Tightening> {
  const result: Tightening = { changed: [], failed: [] };
  await tighten(root, result);
  return result;
}

async function tighten(path: string, result: Tightening): Promise<void> {
  let children: string[] = [];
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return;
    const fromMode = stats.mode & 0o7777;
    if ((fromMode & SHARED_BITS) !== 0) {
      const toMode = fromMode & ~SHARED_BITS;
      await chmod(path, toMode);
      result.changed.push({ path, fromMode, toMode });
    }
    if (stats.isDirectory()) children = await readdir(path);
  } catch (error) {
    // gone meanwhile (or never there) is no change; anything else is reported, and a directory that failed is not entered
    if ((error as { code?: unknown }).code !== 'ENOENT') result.failed.push({ path, reason: String(error) });
  }
  for (const name of children) await tighten(join(path, name), result);
}

/** One log line for what the tightening did, or null when it did nothing. */
export function describeTightening(root: string, { changed, failed }: Tightening, namedMax = 10): string | null {
  if (changed.length === 0 && failed.length === 0) return null;
  const octal = (mode: number): string => `0${mode.toString(8)}`;
  const relative = (path: string): string => (path === root ? '.' : path.slice(root.length + 1));
  const parts: string[] = [];
  if (changed.length > 0) {
    const named = changed.slice(0, namedMax).map((change) => `${relative(change.path)} ${octal(change.fromMode)} -> ${octal(change.toMode)}`);
    const more = changed.length > namedMax ? `, and ${changed.length - namedMax} more` : '';
    parts.push(`removed group/other access from ${changed.length} path(s) under ${root}: ${named.join(', ')}${more}`);
  }
  if (failed.length > 0) {
    parts.push(`could not tighten ${failed.length} path(s) (check their owner): ${failed.slice(0, namedMax).map((failure) => `${relative(failure.path)} (${failure.reason})`).join(', ')}`);
  }
  return parts.join('; ');
}
