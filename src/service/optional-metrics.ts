/**
 * Metrics only with METRICS_TOKEN: without it nothing is measured, not only nothing served,
 * and prom-client is not even loaded (its import is a noticeable part of every start).
 */
import type { Config } from '../config.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';

export async function optionalMetrics(config: Pick<Config, 'metricsToken' | 'prometheusTaskSeriesMax'>): Promise<{ service: ServiceMetrics; token: string } | undefined> {
  if (config.metricsToken === null) return undefined;
  const { ServiceMetrics } = await import('../metrics/service-metrics.ts');
  return { service: new ServiceMetrics({ taskSeriesMax: config.prometheusTaskSeriesMax }), token: config.metricsToken };
}
