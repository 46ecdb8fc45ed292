/**
 * GET /metrics: Prometheus text exposition format. Off unless METRICS_TOKEN is set (the
 * figures describe every tenant's traffic, so they are not public); then the token is
 * required as a bearer token. Refusals are in the usual error envelope.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import type { AppDeps } from '../app-deps.ts';
import { scrapeAllowed } from '../metrics/scrape-access.ts';

export function metricsRoutes({ metrics }: AppDeps) {
  const allowed = metrics === undefined ? () => false : scrapeAllowed(metrics.token);
  return new Elysia({ name: 'metrics' }).get('/metrics', async ({ request }) => {
    if (metrics === undefined) throw new DomainError('NOT_FOUND', 'metrics are off: set METRICS_TOKEN to serve them at GET /metrics');
    if (!allowed(request)) {
      throw new DomainError('UNAUTHORIZED', 'metrics require Authorization: Bearer <METRICS_TOKEN>', undefined, undefined, {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
    }
    const { contentType, body } = await (metrics.scrape?.() ?? metrics.service.scrape());
    return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
  });
}
