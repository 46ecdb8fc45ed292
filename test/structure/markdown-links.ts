/**
 * Reads the links and the heading anchors of a Markdown document, for the test that keeps
 * the documents' links alive. Code blocks and inline code are skipped (a `[x](y)` in a code
 * sample is not a link); anchors are made as GitHub makes them.
 */

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line.replace(/`[^`]*`/g, ''));
  }
  return lines.join('\n');
}

/** Every link target: `[text](target)` and `![alt](target)`, without an optional title. */
export function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of every heading; a repeated heading gets -1, -2... as on GitHub. */
export function slugsOf(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const heading = line.match(/^#{1,6}\s+(.*)$/);
    if (heading === null) continue;
    const base = slugOf(heading[1]!.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}
