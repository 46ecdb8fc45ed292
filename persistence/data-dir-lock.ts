import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { mkdirPrivate, PRIVATE_FILE_MODE } from './private-files.ts';
import { join, resolve } from 'node:path';
import { isMissingFileError } from './file-storage.ts';
import { tryLockExclusive, unlock } from './flock.ts';

/**
 * One process per data directory: two writers appending to one log would interleave
 * frames and corrupt it. The lock is an exclusive `flock` on the LOCK file, which the
 * kernel releases when the holder dies (even by SIGKILL, even while it is still an
 * unreaped zombie), so a supervisor can restart at once. The file holds the holder's pid
 * only so that a refusal can say which process holds it.
 *
 * A LOCK that still names a pid when we get the lock was left by a holder that died
 * without releasing: that is reported as a takeover.
 *
 * A clean release deletes LOCK while still holding it. A process that opened the old file
 * just before could then lock a deleted file, so after locking we check that the path
 * still names the file we locked, and start over if not.
 */
export interface DataDirLock {
  release(): Promise<void>;
  /** The pid of a crashed holder whose lock was taken over, if any. */
  readonly tookOverFromPid: number | undefined;
}

const LOCK_FILE_NAME = 'LOCK';
const LOCK_ATTEMPTS_MAX = 10;
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
  await mkdirPrivate(dir);
  const fd = lockFile(dir, lockPath);
  const tookOverFromPid = readHolderPid(lockPath);
  ftruncateSync(fd, 0);
  writeSync(fd, `${process.pid}\n`, 0);
  if (tookOverFromPid !== undefined) {
    log(`took over the stale lock ${lockPath}: the process that held it (pid ${tookOverFromPid}) is no longer running`);
  }
  heldByThisProcess.add(key);

  let released = false;
  return {
    tookOverFromPid,
    async release(): Promise<void> {
      if (released) return;
      released = true;
      heldByThisProcess.delete(key);
      try {
        unlinkSync(lockPath); // while still locked: nobody else can be writing their pid into it
      } catch (error) {
        if (!isMissingFileError(error)) throw error;
      } finally {
        unlock(fd);
        closeSync(fd);
      }
    },
  };
}

/**
 * Opens and locks LOCK; returns the locked descriptor or throws "in use" naming the holder.
 * `isStillAt` is the check against a concurrent release (a parameter so that a test can
 * stage that race, which no test can time).
 */
export function lockFile(dir: string, lockPath: string, isStillAt: (fd: number, path: string) => boolean = sameFile): number {
  for (let attempt = 0; attempt < LOCK_ATTEMPTS_MAX; attempt++) {
    const fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT, PRIVATE_FILE_MODE);
    if (!tryLockExclusive(fd)) {
      closeSync(fd);
      throw inUseError(dir, lockPath, readHolderPid(lockPath) ?? 'unknown');
    }
    if (isStillAt(fd, lockPath)) {
      fchmodSync(fd, PRIVATE_FILE_MODE); // whatever the umask, and a lock file left by an older version
      return fd;
    }
    closeSync(fd); // we locked a file a releasing holder just deleted: try the new one
  }
  throw new Error(`could not lock ${lockPath}: it kept being replaced`);
}

/** Whether `path` still names the file open as `fd` (false once it was deleted or replaced). */
export function sameFile(fd: number, path: string): boolean {
  try {
    return fstatSync(fd).ino === statSync(path).ino;
  } catch (error) {
    if (isMissingFileError(error)) return false;
    throw error;
  }
}

/**
 * The pid of a live process holding the directory's lock ('unknown' when its LOCK names
 * none), or undefined when nobody holds it. Changes nothing: a LOCK that is missing is not
 * made, and one that is free is locked only for the instant of the check.
 */
export function lockHolder(dir: string): number | 'unknown' | undefined {
  const lockPath = join(dir, LOCK_FILE_NAME);
  let fd: number;
  try {
    fd = openSync(lockPath, constants.O_RDONLY);
  } catch (error) {
    if (isMissingFileError(error)) return undefined;
    throw error;
  }
  try {
    if (!tryLockExclusive(fd)) return readHolderPid(lockPath) ?? 'unknown';
    unlock(fd);
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Undefined when the file is gone or holds no pid (a clean release, or a fresh file). */
export function readHolderPid(lockPath: string): number | undefined {
  try {
    // Stryker disable next-line StringLiteral: without the encoding a Buffer is read, and parseInt reads its UTF-8 text the same
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if (isMissingFileError(error)) return undefined;
    throw error;
  }
}

function inUseError(dir: string, lockPath: string, holderPid: number | string): Error {
  return new Error(
    `data directory ${dir} is in use by another process (pid ${holderPid}); stop that process first ` +
      `(the lock on ${lockPath} is released by the system as soon as that process ends, however it ends)`,
  );
}
