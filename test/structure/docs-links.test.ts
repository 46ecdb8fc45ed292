/**
 * The README and the documents under docs/ point at each other and at sections of each
 * other; a section moved or renamed must not leave a dead link behind. Every relative link
 * and #anchor in README.md, docs/*.md and agents/<agent>/README.md must name a file that
 * exists and, for a Markdown file, a heading it has (anchors made the way GitHub makes them).
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { linksOf, slugsOf } from './markdown-links.ts';

const REPO_ROOT = join(import.meta.dir, '..', '..');

function documents(): string[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name));
  const agents = readdirSync(join(REPO_ROOT, 'agents'))
    .map((name) => join('agents', name, 'README.md'))
    .filter((path) => existsSync(join(REPO_ROOT, path)));
  return ['README.md', ...docs, ...agents];
}

/** The broken links of one document, as `file: target (why)`. */
function brokenLinks(document: string): string[] {
  const text = readFileSync(join(REPO_ROOT, document), 'utf8');
  const broken: string[] = [];
  for (const link of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
    const [pathPart, anchor] = link.split('#', 2) as [string, string | undefined];
    const target = pathPart === '' ? join(REPO_ROOT, document) : join(REPO_ROOT, dirname(document), decodeURI(pathPart));
    const fromRoot = relative(REPO_ROOT, target);
    if (!existsSync(target)) {
      broken.push(`${document}: ${link} (no file ${fromRoot})`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!target.endsWith('.md')) continue; // an anchor into source code is a line, not a heading
    if (!slugsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${document}: ${link} (no heading #${anchor} in ${fromRoot})`);
  }
  return broken;
}

describe('links between the documents', () => {
  test('the documents are found', () => {
    const found = documents();
    expect(found).toContain('README.md');
    expect(found).toContain(join('docs', 'architecture.md'));
    expect(found).toContain(join('agents', 'celery', 'README.md'));
  });

  for (const document of documents()) {
    test(`${document}: every relative link and #anchor resolves`, () => {
      expect(brokenLinks(document)).toEqual([]);
    });
  }
});
