/**
 * Files under the data directory are private: created 0600 (directories 0700) whatever
 * the umask, by every writer (log segments, snapshots, the lock, backups being staged),
 * and a tree left readable by an older version is tightened, with what changed reported.
 * Under a umask of 000, so that nothing here passes merely because the umask was strict.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { writeBackup } from '../../src/backup/write-backup.ts';
import { acquireDataDirLock } from '../../persistence/data-dir-lock.ts';
import type { DurableStore } from '../../persistence/durable-store.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { describeTightening, mkdirPrivate, openPrivate, tightenPrivateTree } from '../../persistence/private-files.ts';

const modeOf = (path: string): number => lstatSync(path).mode & 0o777;
const roots: string[] = [];
let savedUmask = 0;
beforeEach(() => {
  savedUmask = process.umask(0);
});
afterEach(() => {
  process.umask(savedUmask);
});
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

function freshRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'jobwatch-private-files-'));
  roots.push(root);
  return root;
}

/** Every path under `root` (itself included) with its mode, directories marked with a trailing slash. */
function modesUnder(root: string): Record<string, string> {
  const modes: Record<string, string> = {};
  const walk = (path: string, name: string): void => {
    const stats = lstatSync(path);
    modes[stats.isDirectory() ? `${name}/` : name] = (stats.mode & 0o777).toString(8);
    if (stats.isDirectory()) for (const child of readdirSync(path)) walk(join(path, child), name === '.' ? child : `${name}/${child}`);
  };
  walk(root, '.');
  return modes;
}

describe('created private whatever the umask', () => {
  test('directories 0700 (every level created) and files 0600; an existing file opened for append becomes 0600', async () => {
    const root = freshRoot();
    await mkdirPrivate(join(root, 'data', 'log'));
    expect(modeOf(join(root, 'data'))).toBe(0o700);
    expect(modeOf(join(root, 'data', 'log'))).toBe(0o700);
    const storage = new FileStorage();
    await storage.mkdirp(join(root, 'other'));
    expect(modeOf(join(root, 'other'))).toBe(0o700);
    const file = await storage.openAppend(join(root, 'data', 'log', 'segment'));
    await file.close();
    expect(modeOf(join(root, 'data', 'log', 'segment'))).toBe(0o600);
    writeFileSync(join(root, 'old-segment'), 'x', { mode: 0o644 });
    await (await storage.openAppend(join(root, 'old-segment'))).close();
    expect(modeOf(join(root, 'old-segment'))).toBe(0o600);
    const written = await openPrivate(join(root, 'backup.partial'), 'w');
    await written.close();
    expect(modeOf(join(root, 'backup.partial'))).toBe(0o600);
  });

  test('a new directory is exactly 0700 even under a umask that takes owner bits; an existing one is left as it is', async () => {
    const root = freshRoot();
    process.umask(0o277);
    await mkdirPrivate(join(root, 'strict'));
    process.umask(0);
    expect(modeOf(join(root, 'strict'))).toBe(0o700);
    mkdirSync(join(root, 'operators'), { mode: 0o755 });
    await mkdirPrivate(join(root, 'operators'));
    expect(modeOf(join(root, 'operators'))).toBe(0o755);
  });

  test('the log, its snapshots and the lock file of a data directory', async () => {
    const dataDir = join(freshRoot(), 'data');
    const lock = await acquireDataDirLock(dataDir, () => undefined);
    const store = await openDurableStore({ dir: join(dataDir, 'log'), storage: new FileStorage(), fsync: 'always', log: () => undefined });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    await store.append({ t: 'log.keepalive' });
    const engine = new Engine({ clock: new ManualClock(0), log: store, limits: { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 10, retentionMs: 1 } });
    const snapshot = engine.takeSnapshot();
    await store.writeSnapshot(snapshot);
    snapshot.release();
    const modes = modesUnder(dataDir);
    await store.close();
    await lock.release();
    expect(Object.keys(modes).some((path) => path.endsWith('.snap'))).toBe(true);
    expect(Object.keys(modes).some((path) => path.startsWith('log/') && !path.endsWith('.snap') && !path.endsWith('/'))).toBe(true);
    expect(modes['LOCK']).toBe('600');
    for (const [path, mode] of Object.entries(modes)) expect(`${path} ${mode}`).toBe(`${path} ${path.endsWith('/') ? '700' : '600'}`);
  });

  test('a backup being staged: its directories 0700, the file 0600', async () => {
    const dataDir = freshRoot();
    const engine = new Engine({ clock: new ManualClock(0), log: inMemoryLog, limits: { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 10, retentionMs: 1 } });
    const backup = await writeBackup(engine, { lastSeq: 0 } as DurableStore, join(dataDir, 'backup-staging'));
    expect(modeOf(join(dataDir, 'backup-staging'))).toBe(0o700);
    expect(modeOf(join(backup.path, '..'))).toBe(0o700);
    expect(modeOf(backup.path)).toBe(0o600);
  });
});

describe('an older data directory is tightened', () => {
  test('group and other bits are removed from every file and directory (owner bits kept); links are not followed; a second run changes nothing', async () => {
    const root = freshRoot();
    const outside = join(freshRoot(), 'not-ours');
    writeFileSync(outside, 'x', { mode: 0o644 });
    mkdirSync(join(root, 'log', 'deep'), { recursive: true, mode: 0o755 });
    chmodSync(root, 0o755);
    writeFileSync(join(root, 'LOCK'), '1', { mode: 0o644 });
    writeFileSync(join(root, 'log', 'deep', 'snapshot.snap'), 'x', { mode: 0o664 });
    writeFileSync(join(root, 'log', 'private'), 'x', { mode: 0o600 });
    writeFileSync(join(root, 'run-me'), 'x', { mode: 0o755 });
    symlinkSync(outside, join(root, 'link'));

    const tightening = await tightenPrivateTree(root);
    expect(tightening.failed).toEqual([]);
    expect(tightening.changed.map(({ path, fromMode, toMode }) => [path.slice(root.length), fromMode.toString(8), toMode.toString(8)]).sort()).toEqual(
      [
        ['', '755', '700'],
        ['/LOCK', '644', '600'],
        ['/log', '755', '700'],
        ['/log/deep', '755', '700'],
        ['/log/deep/snapshot.snap', '664', '600'],
        ['/run-me', '755', '700'],
      ].sort(),
    );
    expect(modeOf(outside)).toBe(0o644);
    expect(modeOf(join(root, 'log', 'private'))).toBe(0o600);
    expect(await tightenPrivateTree(root)).toEqual({ changed: [], failed: [] });
    expect(await tightenPrivateTree(join(root, 'missing'))).toEqual({ changed: [], failed: [] });
  });

  test('a path that cannot be read is reported with its reason, not thrown', async () => {
    const root = freshRoot();
    writeFileSync(join(root, 'file'), 'x', { mode: 0o600 });
    const { changed, failed } = await tightenPrivateTree(join(root, 'file', 'below'));
    expect(changed).toEqual([]);
    expect(failed).toEqual([{ path: join(root, 'file', 'below'), reason: expect.stringContaining('ENOTDIR') }]);
  });

  test('the log line names what changed (a few paths, then a count) and nothing when nothing did', () => {
    const root = '/data';
    const change = (name: string) => ({ path: `${root}/${name}`, fromMode: 0o644, toMode: 0o600 });
    expect(describeTightening(root, { changed: [], failed: [] })).toBeNull();
    expect(describeTightening(root, { changed: [{ path: root, fromMode: 0o755, toMode: 0o700 }, change('LOCK')], failed: [] })).toBe(
      'removed group/other access from 2 path(s) under /data: . 0755 -> 0700, LOCK 0644 -> 0600',
    );
    expect(describeTightening(root, { changed: [change('a'), change('b'), change('c')], failed: [] }, 2)).toBe(
      'removed group/other access from 3 path(s) under /data: a 0644 -> 0600, b 0644 -> 0600, and 1 more',
    );
    expect(describeTightening(root, { changed: [change('a'), change('b')], failed: [] }, 2)).toBe('removed group/other access from 2 path(s) under /data: a 0644 -> 0600, b 0644 -> 0600');
    expect(describeTightening(root, { changed: [], failed: [{ path: '/data/x', reason: 'EPERM' }] })).toBe('could not tighten 1 path(s) (check their owner): x (EPERM)');
    const failures = ['x', 'y', 'z'].map((name) => ({ path: `${root}/${name}`, reason: 'EPERM' }));
    expect(describeTightening(root, { changed: [change('a')], failed: failures }, 2)).toBe(
      'removed group/other access from 1 path(s) under /data: a 0644 -> 0600; could not tighten 3 path(s) (check their owner): x (EPERM), y (EPERM)',
    );
  });
});
