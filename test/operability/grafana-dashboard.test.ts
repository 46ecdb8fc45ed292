/**
 * docs/grafana-dashboard.json may only chart series the service exports: every metric
 * name in its queries must be a family (or a histogram's _bucket/_sum/_count) of a scrape.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceMetrics } from '../../src/metrics/service-metrics.ts';
import { parsePrometheusText } from '../support/prometheus-text.ts';

test('every series the sample dashboard queries is one the service exports', async () => {
  const dashboard = JSON.parse(readFileSync(join(import.meta.dir, '..', '..', 'docs', 'grafana-dashboard.json'), 'utf8')) as {
    panels: Array<{ targets: Array<{ expr: string }> }>;
  };
  const metrics = new ServiceMetrics();
  metrics.watch({ connections: () => [], openStreams: () => 0, logBytesSinceSnapshot: () => 0 });
  const exported = new Set<string>();
  for (const family of parsePrometheusText((await metrics.scrape()).body).values()) {
    exported.add(family.name);
    for (const sample of family.samples) exported.add(sample.name);
  }

  const queried = dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => target.expr.match(/\b(jobwatch|process|nodejs)_[a-z0-9_]+/g) ?? []));

  expect(queried.length).toBeGreaterThan(20);
  expect([...new Set(queried)].filter((name) => !exported.has(name))).toEqual([]);
});
