/**
 * `npm install` in a fresh clone must be quiet and leave the clone clean on the Node.js the
 * README names: no `EBADENGINE` warning (every locked package accepts that Node), no
 * "install scripts not yet covered by allowScripts" notice (each package with an install
 * script is approved or denied in `allowScripts`), and nothing for npm to rewrite in the
 * committed lock file (its root entry says what package.json says). Checked from the files,
 * for both installs `npm install` runs: the service's and the BullMQ agent's.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const REPO_ROOT = join(import.meta.dir, '..', '..');

interface PackageJson {
  engines?: { node?: string };
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}

interface LockEntry extends PackageJson {
  version?: string;
  hasInstallScript?: boolean;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as T;

/** The scripts npm runs on install (`prepare` too, for the root package). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

const INSTALLS = [
  { folder: '.', packageJson: readJson<PackageJson>('package.json'), lock: readJson<{ packages: Record<string, LockEntry> }>('package-lock.json') },
  {
    folder: 'agents/bullmq',
    packageJson: readJson<PackageJson>('agents/bullmq/package.json'),
    lock: readJson<{ packages: Record<string, LockEntry> }>('agents/bullmq/package-lock.json'),
  },
];

/** The oldest Node.js the README names for the quick start, e.g. "Node.js 20.17" -> "20.17.0". */
function readmeNodeFloor(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const named = /Node\.js (\d+)\.(\d+) or later/.exec(readme);
  if (named === null) throw new Error('the README quick start names no "Node.js <major>.<minor> or later"');
  return `${named[1]}.${named[2]}.0`;
}

/** The package's name from its lock path: node_modules/a/node_modules/@s/b -> @s/b. */
const nameOf = (lockPath: string): string => lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('a fresh npm install is clean on the Node.js the README names', () => {
  const floor = readmeNodeFloor();

  test('package.json states the same floor as the README in `engines`', () => {
    for (const { folder, packageJson } of INSTALLS) {
      expect({ folder, node: packageJson.engines?.node }).toEqual({ folder, node: `>=${floor.replace(/\.0$/, '')}` });
    }
  });

  test(`every locked package accepts Node.js ${floor} (no EBADENGINE warning)`, () => {
    for (const { folder, lock } of INSTALLS) {
      const refusing = Object.entries(lock.packages)
        .filter(([path, entry]) => path !== '' && entry.engines?.node !== undefined && !Bun.semver.satisfies(floor, entry.engines.node))
        .map(([path, entry]) => `${folder}/${path}@${entry.version} wants node ${entry.engines?.node}`);
      expect(refusing).toEqual([]);
    }
  });

  test('every package with an install script is approved or denied in allowScripts', () => {
    for (const { folder, packageJson, lock } of INSTALLS) {
      const decided = new Set(Object.keys(packageJson.allowScripts ?? {}).map((key) => key.replace(/(.)@.*$/, '$1')));
      const undecided = Object.entries(lock.packages)
        .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true && !decided.has(nameOf(path)))
        .map(([path]) => `${folder}/${path}`);
      expect(undecided).toEqual([]);
    }
  });

  test("the lock file's root entry is what npm writes from package.json (install leaves it unchanged)", () => {
    for (const { folder, packageJson, lock } of INSTALLS) {
      const root = lock.packages[''] ?? {};
      const hasInstallScript = INSTALL_SCRIPTS.some((name) => packageJson.scripts?.[name] !== undefined);
      expect({ folder, hasInstallScript: root.hasInstallScript === true }).toEqual({ folder, hasInstallScript });
      expect({ folder, dependencies: root.dependencies }).toEqual({ folder, dependencies: packageJson.dependencies });
      expect({ folder, devDependencies: root.devDependencies }).toEqual({ folder, devDependencies: packageJson.devDependencies });
      expect({ folder, engines: root.engines }).toEqual({ folder, engines: packageJson.engines });
    }
  });
});
