import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { acquireDataDirLock } from '../../persistence/data-dir-lock.ts';
import { EXIT_WITH_PARENT } from '../support/exit-with-parent.ts';

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

const LOCK_MODULE = resolve(import.meta.dir, '../../persistence/data-dir-lock.ts');


/**
 * Another process that takes the lock and holds it until killed, or until this test process
 * ends (its stdin closes then), so a failing test leaves no holder behind.
 */
async function holderProcess(dir: string) {
  const script = `const { acquireDataDirLock } = await import(${JSON.stringify(LOCK_MODULE)}); await acquireDataDirLock(${JSON.stringify(dir)}); console.log('locked'); ${EXIT_WITH_PARENT}`;
  const child = Bun.spawn([process.execPath, '-e', script], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain('locked');
  return child;
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

  test('given a lock held by another live process, acquiring fails naming its pid; once it is SIGKILLed the lock is free at once', async () => {
    const dir = freshDir();
    const holder = await holderProcess(dir);

    const error = await acquireDataDirLock(dir).catch((caught: unknown) => caught as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`data directory ${dir} is in use by another process (pid ${holder.pid})`);
    expect((error as Error).message).toContain('stop that process first');

    holder.kill('SIGKILL');
    await holder.exited;
    const lines: string[] = [];
    const lock = await acquireDataDirLock(dir, (line) => lines.push(line));
    expect(lock.tookOverFromPid).toBe(holder.pid);
    expect(lines).toEqual([`took over the stale lock ${join(dir, 'LOCK')}: the process that held it (pid ${holder.pid}) is no longer running`]);
    await lock.release();
  });

  test('a LOCK naming a live pid that holds no lock does not block (the kernel lock decides, not the pid)', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'LOCK'), `${process.ppid}\n`);
    const lock = await acquireDataDirLock(dir, () => {});
    expect(lock.tookOverFromPid).toBe(process.ppid);
    await lock.release();
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
