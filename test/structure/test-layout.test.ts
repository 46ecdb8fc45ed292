/**
 * Tests findable from the code: test/README.md maps every folder under test/ to the source it
 * tests (a new folder without its row fails here), and no two test files share a name, so a
 * name in a failure report or a search names one file.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';

const REPO_ROOT = join(import.meta.dir, '..', '..');
const TEST_ROOT = join(REPO_ROOT, 'test');

function testFiles(): string[] {
  return readdirSync(TEST_ROOT, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.test\.tsx?$/.test(entry.name))
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'));
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

  test('no two test files share a name', () => {
    const byName = new Map<string, string[]>();
    for (const file of testFiles()) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
    const shared = [...byName.values()].filter((files) => files.length > 1);
    expect(testFiles().length).toBeGreaterThan(100);
    expect(shared).toEqual([]);
  });
});
