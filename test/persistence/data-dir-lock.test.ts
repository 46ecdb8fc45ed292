import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock } from '../../persistence/data-dir-lock.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-lock-'));
  tempDirs.push(dir);
  return dir;
}

async function pidOfExitedProcess(): Promise<number> {
  const child = Bun.spawn(['true']);
  await child.exited;
  return child.pid;
}

describe('data directory lock', () => {
  test('given a held lock, when it is acquired again, then that fails; after release it succeeds', async () => {
    const dir = freshDir();
    const lock = await acquireDataDirLock(dir);
    expect(readFileSync(join(dir, 'LOCK'), 'utf8').trim()).toBe(String(process.pid));

    await expect(acquireDataDirLock(dir)).rejects.toThrow(`data directory ${dir} is already locked by this process (pid ${process.pid})`);

    await lock.release();
    expect(existsSync(join(dir, 'LOCK'))).toBe(false);
    await (await acquireDataDirLock(dir)).release();
  });

  test('given a lock held by another live process, when acquiring, then the error names its pid and the way out', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'LOCK'), `${process.ppid}\n`);

    const error = await acquireDataDirLock(dir).catch((caught: unknown) => caught as Error);

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`data directory ${dir} is in use by another process (pid ${process.ppid})`);
    expect((error as Error).message).toContain(`delete ${join(dir, 'LOCK')}`);
  });

  test('given a lock left by a process that exited, when acquiring, then it is taken over and that is said', async () => {
    const dir = freshDir();
    const deadPid = await pidOfExitedProcess();
    writeFileSync(join(dir, 'LOCK'), `${deadPid}\n`);
    const lines: string[] = [];

    const lock = await acquireDataDirLock(dir, (line) => lines.push(line));

    expect(lock.tookOverFromPid).toBe(deadPid);
    expect(readFileSync(join(dir, 'LOCK'), 'utf8').trim()).toBe(String(process.pid));
    expect(lines).toEqual([`took over the stale lock ${join(dir, 'LOCK')}: the process that held it (pid ${deadPid}) is no longer running`]);
    await lock.release();
  });

  test('given a lock holding our own pid from an earlier run (containers reuse pid 1), when acquiring, then it is taken over', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'LOCK'), `${process.pid}\n`);

    const lock = await acquireDataDirLock(dir, () => {});

    expect(lock.tookOverFromPid).toBe(process.pid);
    await lock.release();
  });
});
