/**
 * Summary of a CPU profile written by `bun --cpu-prof` (Chrome .cpuprofile format):
 * self time per function, biggest first.
 *
 * Bun's sampler has no "(idle)" entry: time the process spends idle shows up under the
 * last JavaScript that ran, typically a timer callback (e.g. a liveness check or close()).
 * Profile a process that is busy for most of its life, or discount such entries.
 *
 *   npx bun load/profile.ts path/to/file.cpuprofile [--top 25] [--inclusive]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './service.ts';
import { flag, num, parseArgs, table } from './util.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function summarizeProfile(path: string, top = 25, inclusive = false): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const keyOf = (node: ProfileNode): string => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.startsWith('file://') ? url.slice(7) : url;
    const where = file === '' ? '' : `${file.startsWith(REPO_ROOT) ? relative(REPO_ROOT, file) : file.replace(/^.*node_modules\//, '')}:${lineNumber + 1}`;
    return `${functionName || '(anonymous)'} ${where}`.trim();
  };
  const timeUs = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (node === undefined) return;
    total += delta;
    if (!inclusive) {
      const key = keyOf(node);
      timeUs.set(key, (timeUs.get(key) ?? 0) + delta);
      return;
    }
    // total time: every function on the sampled stack, once per sample
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const key = keyOf(byId.get(at)!);
      if (key === '(root)' || seen.has(key)) continue;
      seen.add(key);
      timeUs.set(key, (timeUs.get(key) ?? 0) + delta);
    }
  });
  const rows = [...timeUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => [key.length > 110 ? key.slice(0, 107) + '...' : key, `${(us / 1000).toFixed(0)} ms`, `${((100 * us) / Math.max(1, total)).toFixed(1)}%`]);
  const kind = inclusive ? 'total time, callees included' : 'self time';
  return `${path}: ${(total / 1e6).toFixed(1)} s sampled (idle time is attributed to the last function that ran)\n${table([`function (${kind})`, inclusive ? 'total' : 'self', 'share'], rows)}`;
}

/** The newest .cpuprofile in a directory, or null. */
export function newestProfile(dir: string): string | null {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  return files.length === 0 ? null : join(dir, files.sort().at(-1)!);
}

if (import.meta.main) {
  const args = parseArgs();
  const path = process.argv.slice(2).find((a) => a.endsWith('.cpuprofile'));
  if (path === undefined) throw new Error('usage: bun load/profile.ts FILE.cpuprofile [--top 25]');
  console.log(summarizeProfile(path, num(args, 'top', 25), flag(args, 'inclusive')));
}
