import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isMissingFileError } from './file-storage.ts';

/**
 * One process per data directory: two writers appending to one log would interleave
 * frames and corrupt it. The lock is a LOCK file created exclusively, holding the pid.
 *
 * A LOCK whose pid is not running is stale (the holder crashed) and is taken over. A
 * LOCK holding our own pid that this process did not take is stale too: in a container
 * the service is often pid 1 on every start, so "our pid is alive" proves nothing.
 *
 * Known limit: two processes taking over the same stale lock at the same instant can
 * both succeed (read, unlink and create are separate steps). Starting two instances on
 * one directory at the same moment after a crash is the only way to get there.
 */
export interface DataDirLock {
  release(): Promise<void>;
  /** The pid of a crashed holder whose lock was taken over, if any. */
  readonly tookOverFromPid: number | undefined;
}

const LOCK_FILE_NAME = 'LOCK';
const heldByThisProcess = new Set<string>();

export async function acquireDataDirLock(
  dir: string,
  log: (line: string) => void = (line) => console.warn(line),
): Promise<DataDirLock> {
  const key = resolve(dir);
  const lockPath = join(dir, LOCK_FILE_NAME);
  if (heldByThisProcess.has(key)) {
    throw new Error(`data directory ${dir} is already locked by this process (pid ${process.pid})`);
  }
  await mkdir(dir, { recursive: true });
  let tookOverFromPid: number | undefined;
  if (!(await createLockFile(lockPath))) {
    const holderPid = await readHolderPid(lockPath);
    if (holderPid !== undefined && holderPid !== process.pid && isProcessAlive(holderPid)) {
      throw inUseError(dir, lockPath, holderPid);
    }
    await unlink(lockPath).catch((error: unknown) => {
      if (!isMissingFileError(error)) throw error;
    });
    if (!(await createLockFile(lockPath))) {
      throw inUseError(dir, lockPath, (await readHolderPid(lockPath)) ?? 'unknown');
    }
    tookOverFromPid = holderPid;
    log(`took over the stale lock ${lockPath}: the process that held it (pid ${holderPid ?? 'unknown'}) is no longer running`);
  }
  heldByThisProcess.add(key);

  let released = false;
  return {
    tookOverFromPid,
    async release(): Promise<void> {
      if (released) return;
      released = true;
      heldByThisProcess.delete(key);
      // Remove the file only while it is still ours; someone may have taken it over by hand.
      if ((await readHolderPid(lockPath)) === process.pid) await unlink(lockPath);
    },
  };
}

/** False when the file already exists. */
async function createLockFile(lockPath: string): Promise<boolean> {
  try {
    const handle = await open(lockPath, 'wx');
    try {
      await handle.writeFile(`${process.pid}\n`);
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return false;
    throw error;
  }
}

/** Undefined when the file is gone or holds no pid (its writer died before writing it). */
async function readHolderPid(lockPath: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(lockPath, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if (isMissingFileError(error)) return undefined;
    throw error;
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

function inUseError(dir: string, lockPath: string, holderPid: number | string): Error {
  return new Error(
    `data directory ${dir} is in use by another process (pid ${holderPid}); stop that process first, ` +
      `or if no process of this service is using the directory, delete ${lockPath}`,
  );
}
