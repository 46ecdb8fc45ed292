/** Observations buffered on the hot path all reach the histogram: across buffer refills and at every scrape. */
import { expect, test } from 'bun:test';
import { Registry } from 'prom-client';
import { BufferedHistogram } from '../../src/metrics/buffered-histogram.ts';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';

test('every observation is counted, in its bucket, whether the buffer filled or the scrape flushed it', async () => {
  const registry = new Registry();
  const histogram = new BufferedHistogram({ name: 'h_seconds', help: 'test', buckets: [1, 10], registers: [registry] });
  const scrape = async () => parsePrometheusText(await registry.metrics());

  for (let index = 0; index < 2_500; index++) histogram.observe(index % 2 === 0 ? 0.5 : 5); // fills the buffer of 1,024 twice
  const first = await scrape();
  histogram.observe(50);
  const second = await scrape();

  expect(sampleValue(first, 'h_seconds_count')).toBe(2_500);
  expect(sampleValue(first, 'h_seconds_sum')).toBe(1_250 * 0.5 + 1_250 * 5);
  expect(sampleValue(first, 'h_seconds_bucket', { le: '1' })).toBe(1_250);
  expect(sampleValue(first, 'h_seconds_bucket', { le: '10' })).toBe(2_500);
  expect(sampleValue(second, 'h_seconds_count')).toBe(2_501);
  expect(sampleValue(second, 'h_seconds_bucket', { le: '+Inf' })).toBe(2_501);
});
