/**
 * Tests findable from the code: test/README.md maps every folder under test/ to the source it
 * tests (a new folder without its row fails here), and no two test files share a name, the
 * agents' own tests beside them included, so a name in a failure report or a search names
 * one file.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';

const REPO_ROOT = join(import.meta.dir, '..', '..');
const TEST_ROOT = join(REPO_ROOT, 'test');

/** Test files of bun (test/), node (the BullMQ agent's), pytest (the Celery agent's) and minitest (the Sidekiq agent's). */
const TEST_FOLDERS: Array<[string, RegExp]> = [
  ['test', /\.test\.tsx?$/],
  ['agents/bullmq/test', /\.test\.js$/],
  ['agents/celery/tests', /^test_\w+\.py$/],
  ['agents/sidekiq/test', /_test\.rb$/],
];

function testFiles(): string[] {
  return TEST_FOLDERS.flatMap(([folder, pattern]) =>
    readdirSync(join(REPO_ROOT, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && pattern.test(entry.name))
      .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)).split(sep).join('/')),
  );
}

describe('the test tree', () => {
  test('every folder under test/ has its row in test/README.md, and every row names a folder that exists', () => {
    const folders = readdirSync(TEST_ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `test/${entry.name}/`);
    const map = readFileSync(join(TEST_ROOT, 'README.md'), 'utf8');
    const rows = [...map.matchAll(/^\| `(test\/[\w-]+\/)` \|/gm)].map((match) => match[1]!);
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((folder) => !rows.includes(folder))).toEqual([]);
    expect(rows.filter((row) => !folders.includes(row))).toEqual([]);
  });

  test('no two test files share a name (whatever their language: a test moved to an agent is not left behind)', () => {
    const byName = new Map<string, string[]>();
    const nameOf = (file: string) => basename(file).replace(/\.(tsx?|js|py|rb)$/, '');
    for (const file of testFiles()) byName.set(nameOf(file), [...(byName.get(nameOf(file)) ?? []), file]);
    const shared = [...byName.values()].filter((files) => files.length > 1);
    expect(testFiles().length).toBeGreaterThan(100);
    expect(shared).toEqual([]);
  });
});
