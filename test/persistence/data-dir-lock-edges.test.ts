/**
 * The data-directory lock's edges: what LOCK may contain, releasing twice or after LOCK
 * was removed, a holder that wrote no pid, the race with a releasing holder (staged through
 * the `isStillAt` check), descriptors never leaked, and flock itself.
 */
import { afterAll, describe, expect, spyOn, test } from 'bun:test';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { acquireDataDirLock, lockFile, readHolderPid, sameFile } from '../../persistence/data-dir-lock.ts';
import { tryLockExclusive, unlock } from '../../persistence/flock.ts';
import { EXIT_WITH_PARENT } from '../support/exit-with-parent.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-lock-edges-'));
  tempDirs.push(dir);
  return dir;
}

/** How many of this process's descriptors are open on `path` (also after it was deleted). */
function descriptorsOn(path: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === path || target === `${path} (deleted)`) count++;
    } catch {
      // closed while we looked: not open on path
    }
  }
  return count;
}

const LOCK_MODULE = resolve(import.meta.dir, '../../persistence/data-dir-lock.ts');

describe('what LOCK holds', () => {
  test('a positive integer is a pid; zero, negatives, text, nothing and a missing file are none', () => {
    const dir = freshDir();
    const lockPath = join(dir, 'LOCK');
    expect(readHolderPid(lockPath)).toBeUndefined();
    for (const [content, pid] of [
      ['4242\n', 4242],
      ['1', 1],
      ['0\n', undefined],
      ['-5\n', undefined],
      ['abc\n', undefined],
      ['', undefined],
      ['99999999999999999999\n', undefined],
    ] as const) {
      writeFileSync(lockPath, content);
      expect(readHolderPid(lockPath)).toBe(pid);
    }
  });

  test('a LOCK that cannot be read for another reason than being gone is an error, not "no holder"', () => {
    const dir = freshDir();
    mkdirSync(join(dir, 'LOCK'));
    expect(() => readHolderPid(join(dir, 'LOCK'))).toThrow(/EISDIR/);
  });

  test('a fresh lock and one released cleanly are no takeover: nothing is logged', async () => {
    const dir = freshDir();
    const lines: string[] = [];
    const first = await acquireDataDirLock(dir, (line) => lines.push(line));
    expect(first.tookOverFromPid).toBeUndefined();
    await first.release();
    writeFileSync(join(dir, 'LOCK'), '0\n');
    const second = await acquireDataDirLock(dir, (line) => lines.push(line));
    expect(second.tookOverFromPid).toBeUndefined();
    await second.release();
    expect(lines).toEqual([]);
  });

  test('a takeover is logged with console.warn unless a log is given', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'LOCK'), '4242\n');
    const warn = spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const lock = await acquireDataDirLock(dir);
      await lock.release();
      expect(warn.mock.calls).toEqual([[`took over the stale lock ${join(dir, 'LOCK')}: the process that held it (pid 4242) is no longer running`]]);
    } finally {
      warn.mockRestore();
    }
  });

  test('a holder that wrote no pid is named "unknown", with the whole advice', async () => {
    const dir = freshDir();
    const lockPath = join(dir, 'LOCK');
    const script = `const { acquireDataDirLock } = await import(${JSON.stringify(LOCK_MODULE)}); await acquireDataDirLock(${JSON.stringify(dir)}); require('node:fs').writeFileSync(${JSON.stringify(lockPath)}, ''); console.log('locked'); ${EXIT_WITH_PARENT}`;
    const holder = Bun.spawn([process.execPath, '-e', script], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
    try {
      const { value } = await holder.stdout.getReader().read();
      expect(new TextDecoder().decode(value)).toContain('locked');
      await expect(acquireDataDirLock(dir)).rejects.toThrow(
        `data directory ${dir} is in use by another process (pid unknown); stop that process first ` +
          `(the lock on ${lockPath} is released by the system as soon as that process ends, however it ends)`,
      );
    } finally {
      holder.kill('SIGKILL');
      await holder.exited;
    }
  });
});

describe('release', () => {
  test('releasing closes the descriptor: none is left open', async () => {
    const dir = freshDir();
    const lock = await acquireDataDirLock(dir);
    expect(descriptorsOn(join(dir, 'LOCK'))).toBe(1);
    await lock.release();
    expect(descriptorsOn(join(dir, 'LOCK'))).toBe(0);
  });

  test('a second release does nothing, even when a newer lock on the same directory reuses the descriptor number', async () => {
    const dir = freshDir();
    const old = await acquireDataDirLock(dir);
    await old.release();
    const current = await acquireDataDirLock(dir);
    await old.release();
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(`${process.pid}\n`);
    await expect(acquireDataDirLock(dir)).rejects.toThrow('already locked by this process');
    await current.release();
  });

  test('a LOCK removed behind our back is no error on release', async () => {
    const dir = freshDir();
    const lock = await acquireDataDirLock(dir);
    unlinkSync(join(dir, 'LOCK'));
    await lock.release();
    expect(descriptorsOn(join(dir, 'LOCK'))).toBe(0);
  });

  test('a LOCK that cannot be removed is an error, and the descriptor is still closed', async () => {
    const dir = freshDir();
    const lock = await acquireDataDirLock(dir);
    unlinkSync(join(dir, 'LOCK'));
    mkdirSync(join(dir, 'LOCK'));
    expect(descriptorsOn(join(dir, 'LOCK'))).toBe(1);
    await expect(lock.release()).rejects.toThrow(/EISDIR|EPERM/);
    expect(descriptorsOn(join(dir, 'LOCK'))).toBe(0);
  });
});

describe('the race with a releasing holder', () => {
  test('sameFile: true for the file open, false once the path is gone or names another file', () => {
    const dir = freshDir();
    const path = join(dir, 'LOCK');
    const fd = openSync(path, 'w');
    try {
      expect(sameFile(fd, path)).toBe(true);
      unlinkSync(path);
      expect(sameFile(fd, path)).toBe(false);
      writeFileSync(path, '');
      expect(sameFile(fd, path)).toBe(false);
      writeFileSync(join(dir, 'file'), '');
      expect(() => sameFile(fd, join(dir, 'file', 'LOCK'))).toThrow(/ENOTDIR/);
    } finally {
      closeSync(fd);
    }
  });

  test('a locked file that was replaced meanwhile is let go and the lock is tried again', () => {
    const dir = freshDir();
    const lockPath = join(dir, 'LOCK');
    const answers = [false, true];
    const fd = lockFile(dir, lockPath, () => answers.shift()!);
    expect(answers).toEqual([]);
    expect(descriptorsOn(lockPath)).toBe(1);
    unlock(fd);
    closeSync(fd);
  });

  test('after 10 replaced files it gives up, saying so, with nothing left open or locked', async () => {
    const dir = freshDir();
    const lockPath = join(dir, 'LOCK');
    let checks = 0;
    expect(() =>
      lockFile(dir, lockPath, () => {
        checks++;
        return false;
      }),
    ).toThrow(`could not lock ${lockPath}: it kept being replaced`);
    expect(checks).toBe(10);
    expect(descriptorsOn(lockPath)).toBe(0);
    await (await acquireDataDirLock(dir)).release();
  });
});

describe('flock', () => {
  test('one open file holds the lock; another is refused until it unlocks', () => {
    const dir = freshDir();
    const path = join(dir, 'LOCK');
    writeFileSync(path, '');
    const first = openSync(path, 'r+');
    const second = openSync(path, 'r+');
    try {
      expect(tryLockExclusive(first)).toBe(true);
      expect(tryLockExclusive(second)).toBe(false);
      unlock(first);
      expect(tryLockExclusive(second)).toBe(true);
      expect(tryLockExclusive(first)).toBe(false);
    } finally {
      closeSync(first);
      closeSync(second);
    }
    expect(existsSync(path)).toBe(true);
  });

  test('a descriptor that is not open is an error naming errno (EBADF), not "held by another"', () => {
    expect(() => tryLockExclusive(-1)).toThrow('flock failed (errno 9)');
  });
});
