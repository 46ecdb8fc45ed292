import { describe, expect, test } from 'bun:test';
import { SoakRecorder, verdict } from '../../load/soak-stats.ts';

const MiB = 1024 * 1024;

/** A run of `seconds` seconds after a 2 s warm-up, one `list` request a second. */
function run(seconds: number, at: (second: number) => { rssBytes: number; cpu: number; listMs: number }): SoakRecorder {
  const recorder = new SoakRecorder();
  for (let second = 1; second <= 2 + seconds; second++) {
    const figures = at(second);
    recorder.record('list', figures.listMs, 200);
    recorder.sample(second, figures.rssBytes, { serviceCpuPercent: figures.cpu, loadAverage: 1 });
  }
  return recorder;
}

describe('the soak verdict (first third against last third after warm-up)', () => {
  test('steady figures are flat', () => {
    const result = verdict(run(30, () => ({ rssBytes: 100 * MiB, cpu: 20, listMs: 5 })), 2);
    expect(result.flat).toBe(true);
    expect(result.text).toContain('verdict: memory, CPU and latency stayed flat');
  });

  test('memory that keeps growing is not flat', () => {
    const result = verdict(run(30, (second) => ({ rssBytes: 100 * MiB + second * 4 * MiB, cpu: 20, listMs: 5 })), 2);
    expect(result.flat).toBe(false);
    expect(result.text).toMatch(/memory \(RSS\).*GREW/);
  });

  test('latency that rises with no more service CPU per request is not flat, and the output says the machine is the likely cause', () => {
    const result = verdict(run(30, (second) => ({ rssBytes: 100 * MiB, cpu: 20, listMs: second > 22 ? 40 : 5 })), 2);
    expect(result.flat).toBe(false);
    expect(result.text).toMatch(/list .*ROSE/);
    expect(result.text).toContain('waited for a CPU held by other processes');
  });

  test('more service CPU per request at the same load is not flat', () => {
    const result = verdict(run(30, (second) => ({ rssBytes: 100 * MiB, cpu: second > 22 ? 60 : 20, listMs: 5 })), 2);
    expect(result.flat).toBe(false);
    expect(result.text).toMatch(/service CPU per request.*ROSE/);
  });

  test('problems are listed', () => {
    const recorder = run(30, () => ({ rssBytes: 100 * MiB, cpu: 20, listMs: 5 }));
    recorder.problem('ingest', 'HTTP 5xx');
    expect(verdict(recorder, 2).text).toContain('ingest: HTTP 5xx: 1');
  });
});
