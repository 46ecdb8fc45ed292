/**
 * FileStorage, the real-disk Storage: the simulation runs the store against a simulated
 * disk, so these check the real one keeps the same contract: what `exists` says and
 * which errors it lets through, that directories are made and synced for real (a missing
 * one fails), that appends land whole and syncs reach the file handle.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStorage, isMissingFileError } from '../../persistence/file-storage.ts';

const storage = new FileStorage();
const dir = mkdtempSync(join(tmpdir(), 'jobwatch-file-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('file storage', () => {
  test('exists: true for a file, false for a missing one, and other errors are thrown, not read as missing', async () => {
    const file = join(dir, 'present');
    writeFileSync(file, 'x');
    expect(await storage.exists(file)).toBe(true);
    expect(await storage.exists(join(dir, 'absent'))).toBe(false);
    await expect(storage.exists(join(file, 'below-a-file'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  test('only ENOENT counts as a missing file', () => {
    expect(isMissingFileError(Object.assign(new Error('gone'), { code: 'ENOENT' }))).toBe(true);
    for (const other of [Object.assign(new Error('no'), { code: 'EACCES' }), { code: 'EIO' }, null, undefined, 'ENOENT', 2]) {
      expect(isMissingFileError(other)).toBe(false);
    }
  });

  test('mkdirp makes nested directories, and fsyncDir fails for a directory that does not exist', async () => {
    const nested = join(dir, 'a', 'b', 'c');
    await storage.mkdirp(nested);
    expect(existsSync(nested)).toBe(true);
    await storage.fsyncDir(nested);
    await expect(storage.fsyncDir(join(dir, 'never-made'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('appends land whole and in order; datasync reaches the handle (it fails once the handle is closed)', async () => {
    const path = join(dir, 'appended');
    const file = await storage.openAppend(path);
    await file.append(new TextEncoder().encode('hello '));
    await file.append(new TextEncoder().encode('world'));
    await file.datasync();
    expect(readFileSync(path, 'utf8')).toBe('hello world');
    await file.close();
    await expect(file.datasync()).rejects.toThrow();
  });
});
