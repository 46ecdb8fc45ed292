/**
 * A self-hosted install should stay small: `npm install` of this repository under 350 MB of
 * node_modules and at most 150 production packages. The count is read from
 * package-lock.json (every non-dev entry, the optional platform binaries of every platform
 * included, so it is an upper bound of `npm ls --omit=dev --all --parseable` on any one
 * machine); the size is what the lock file's packages occupy on disk here (entries the lock
 * file does not name, such as caches, are not counted), so it is the size of a fresh install.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const REPO_ROOT = join(import.meta.dir, '..', '..');
const PRODUCTION_PACKAGES_MAX = 150;
const INSTALL_BYTES_MAX = 350 * 1024 * 1024;

interface LockEntry {
  dev?: boolean;
}

const lockPackages = (JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;

/**
 * Bytes on disk under a path (allocated blocks, as `du` counts them): symbolic links not
 * followed, a file with several hard links counted once (bun's install links `bunx` to the
 * same 100 MB binary as `bun`).
 */
function diskBytes(path: string, seen: Set<string>): number {
  const stat = lstatSync(path);
  const inode = `${stat.dev}:${stat.ino}`;
  if (seen.has(inode)) return 0;
  seen.add(inode);
  if (!stat.isDirectory()) return stat.blocks * 512;
  let bytes = stat.blocks * 512;
  for (const name of readdirSync(path)) bytes += diskBytes(join(path, name), seen);
  return bytes;
}

describe('install size', () => {
  test(`at most ${PRODUCTION_PACKAGES_MAX} production packages in the lock file`, () => {
    const production = Object.entries(lockPackages).filter(([path, entry]) => path !== '' && entry.dev !== true);
    expect(production.length).toBeGreaterThan(10);
    expect(production.length).toBeLessThanOrEqual(PRODUCTION_PACKAGES_MAX);
  });

  test('the installed packages of the lock file take under 350 MB', () => {
    // top-level folders only: nested entries (node_modules/a/node_modules/b) are inside them
    const topLevel = Object.keys(lockPackages).filter((path) => /^node_modules\/(@[^/]+\/)?[^/@]+$/.test(path));
    const installed = topLevel.map((path) => join(REPO_ROOT, path)).filter((path) => existsSync(path));
    expect(installed.length).toBeGreaterThan(topLevel.length / 2);
    const seen = new Set<string>();
    const bytes = installed.reduce((sum, path) => sum + diskBytes(path, seen), 0);
    console.log(`install size: ${(bytes / 1024 / 1024).toFixed(0)} MiB in ${installed.length} packages`);
    expect(bytes).toBeLessThan(INSTALL_BYTES_MAX);
  });
});
