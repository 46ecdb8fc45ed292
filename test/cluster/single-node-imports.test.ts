/**
 * Without CLUSTER_NATS_URL a node must not load any NATS module: the engine, the
 * persistence layer and the edge import cluster/ only through the one dynamic import in
 * src/open-engine.ts (type-only imports are erased), and nothing outside cluster/ and
 * its tests imports @nats-io.
 */
import { expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const REPO_ROOT = join(import.meta.dir, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

test('only src/open-engine.ts reaches cluster/, by a dynamic import; nothing else loads @nats-io', () => {
  const offenders: string[] = [];
  const dynamicImports: string[] = [];
  for (const top of ['src', 'actors', 'persistence', 'ui', 'load']) {
    for (const path of sourceFiles(join(REPO_ROOT, top))) {
      const file = relative(REPO_ROOT, path);
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (/^\s*import\s+type\b/.test(line)) continue;
        if (/['"]@nats-io\//.test(line)) offenders.push(`${file}: ${line.trim()}`);
        if (/from\s+['"][./]*\/cluster\//.test(line)) offenders.push(`${file}: ${line.trim()}`);
        if (/import\(\s*['"][./]*\/cluster\//.test(line)) dynamicImports.push(file);
      }
    }
  }
  expect(offenders).toEqual([]);
  expect(dynamicImports).toEqual(['src/open-engine.ts']);
});
