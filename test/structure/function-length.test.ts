/**
 * The house limit: a function is at most 80 lines, so each can be read whole and says one
 * thing. Checked over the code that runs (the service, the engine, persistence, cluster
 * mode, the dashboard, the BullMQ agent and the load tools). The functions over it when
 * the limit began to be checked are listed with their length then: they may shrink (then
 * lower or drop their entry) but not grow, and nothing new joins them.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { functionLengths } from './function-lengths.ts';

const REPO_ROOT = join(import.meta.dir, '..', '..');
const LINES_MAX = 80;
const FOLDERS = ['src', 'actors', 'persistence', 'cluster', 'ui/src', 'agents/bullmq/src', 'load'];

/** `file:function` -> its length when this test began; split them by concept, not by cutting lines. */
const OVER_THE_LIMIT: Record<string, number> = {
  'load/service.ts:startService': 138,
  'load/stream.ts:measureStream': 137,
  'load/stream.ts:runSubscribers': 102,
  'ui/src/pages/jobs/use-job-list.ts:createJobList': 99,
  'load/tenant-fairness.ts:main': 86,
  'src/metrics/service-metrics.ts:constructor': 83,
  'actors/connection/job-columns.ts:toJobColumns': 83,
};

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) => [...new Bun.Glob(`${folder}/**/*.{ts,tsx,js,mjs}`).scanSync(REPO_ROOT)].filter((path) => !path.includes('node_modules')));
}

describe(`functions are at most ${LINES_MAX} lines`, () => {
  test('the scan measures a function from the line that opens it to the one that closes it', () => {
    const source = [
      'export async function outer(a: string): Promise<void> {',
      '  const inner = (x: number) => {',
      '    return x;',
      '  };',
      '  if (a) {',
      '  }',
      '}',
      'class Store {',
      '  constructor(private readonly path: string) {}',
      '  async read(): Promise<string> {',
      "    return '';",
      '  }',
      '}',
    ].join('\n');
    expect(functionLengths(source)).toEqual([
      { name: 'outer', line: 1, lines: 7 },
      { name: 'inner', line: 2, lines: 3 },
      { name: 'constructor', line: 9, lines: 1 },
      { name: 'read', line: 10, lines: 3 },
    ]);
  });

  test(`no function over ${LINES_MAX} lines joins those listed, and none of those grows`, () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(200);
    const over: Record<string, number> = {};
    for (const file of files) {
      for (const { name, lines } of functionLengths(readFileSync(join(REPO_ROOT, file), 'utf8'))) {
        if (lines > LINES_MAX) over[`${file}:${name}`] = lines;
      }
    }
    const grown = Object.entries(over)
      .filter(([key, lines]) => lines > (OVER_THE_LIMIT[key] ?? LINES_MAX))
      .map(([key, lines]) => `${key} is ${lines} lines`);
    expect(grown).toEqual([]);
  });
});
