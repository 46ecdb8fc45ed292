/**
 * Layers import downwards only (docs/architecture.md, "The layering rule"): persistence/
 * imports nothing of ours above it, actors/ only persistence/, cluster/ nothing of src/, and
 * the dashboard (ui/) only actors/ (the view models and constants it shares with the
 * service). Every import of these folders is read from the source (static, dynamic and
 * re-exports), resolved to the folder it names, and held to the rule.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

const REPO_ROOT = join(import.meta.dir, '..', '..');

/** Which of our top-level folders each layer may import (itself always). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  persistence: [],
  actors: ['persistence'],
  cluster: ['persistence', 'actors'],
  ui: ['actors'],
};

function sourceFiles(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.parentPath.split(sep).includes('node_modules') && !entry.parentPath.split(sep).includes('dist'))
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)));
}

/** The relative specifiers a file imports: `import ... from`, `export ... from`, `import(...)`, side-effect imports. */
function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
    specifiers.push((match[1] ?? match[2] ?? match[3])!);
  }
  return specifiers.filter((specifier) => specifier.startsWith('.'));
}

/** The top-level folder of ours a file's import lands in (`src`, `actors`...). */
function folderOf(file: string, specifier: string): string {
  return relative(REPO_ROOT, join(dirname(join(REPO_ROOT, file)), specifier)).split(sep)[0]!;
}

describe('the layering rule', () => {
  test('the import reader finds every kind of import, and only relative ones', () => {
    const source = [
      "import { a } from '../src/a.ts';",
      "import type { B } from './b.ts';",
      "export { c } from '../actors/c.ts';",
      "import './side-effect.ts';",
      "const d = await import('../cluster/d.ts');",
      "import { e } from 'elysia';",
      'import {\n  f,\n  g,\n} from "../persistence/fg.ts";',
    ].join('\n');
    expect(importsOf(source).sort()).toEqual(['../actors/c.ts', '../cluster/d.ts', '../persistence/fg.ts', '../src/a.ts', './b.ts', './side-effect.ts']);
  });

  for (const [layer, allowed] of Object.entries(MAY_IMPORT)) {
    test(`${layer}/ imports ${allowed.length === 0 ? 'nothing of ours above it' : `only ${allowed.map((name) => `${name}/`).join(' and ')} of ours`}`, () => {
      const files = sourceFiles(layer);
      expect(files.length).toBeGreaterThan(0);
      const upwards: string[] = [];
      for (const file of files) {
        for (const specifier of importsOf(readFileSync(join(REPO_ROOT, file), 'utf8'))) {
          const folder = folderOf(file, specifier);
          if (folder !== layer && !allowed.includes(folder)) upwards.push(`${file} imports ${specifier}`);
        }
      }
      expect(upwards).toEqual([]);
    });
  }
});
