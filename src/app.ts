/** The Elysia application: the error boundary first, the cross-site guard, then one module per feature. */
import { Elysia } from 'elysia';
import type { AppDeps } from './app-deps.ts';
import { edgeHeaders } from './http/edge-headers.ts';
import { dashboardRequestGuard } from './http/dashboard-request-guard.ts';
import { accessGuard } from './http/access-guard.ts';
import { errorBoundary } from './http/error-boundary.ts';
import { auditTrail } from './http/audit-trail.ts';
import { InFlightLimiter } from './http/in-flight.ts';
import { adminBackupRoutes } from './routes/admin-backup.ts';
import { alertRoutes } from './routes/alerts.ts';
import { apiDocsRoutes } from './routes/api-docs.ts';
import { agentRoutes } from './routes/agent.ts';
import { authRoutes } from './routes/auth.ts';
import { jobActionRoutes } from './routes/job-actions.ts';
import { commandRoutes } from './routes/commands.ts';
import { queueControlRoutes } from './routes/queue-controls.ts';
import { workerControlRoutes } from './routes/worker-controls.ts';
import { connectionRoutes } from './routes/connections.ts';
import { errorDocsRoutes } from './routes/error-docs.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { ingestRoutes } from './routes/ingest.ts';
import { jobReadRoutes } from './routes/jobs.ts';
import { queueRoutes } from './routes/queues.ts';
import { taskMetricsRoutes } from './routes/task-metrics.ts';
import { streamRoutes } from './routes/stream.ts';
import { workerRoutes } from './routes/workers.ts';
import { userRoutes } from './routes/users.ts';
import { teamRoutes } from './routes/teams.ts';
import { savedViewRoutes } from './routes/saved-views.ts';
import { auditRoutes } from './routes/audit.ts';
import { oidcRoutes } from './routes/oidc.ts';
import { uiRoutes } from './routes/ui.ts';

export function createApp(deps: AppDeps) {
  // one account of what each connection has in flight, across the routes that read an API key's bodies
  const inFlight = new InFlightLimiter(deps.config.inFlightPerConnection);
  return new Elysia()
    // its error hook records a refusal before the boundary answers it
    .use(auditTrail(deps.engine, deps.config, deps.logError))
    .use(errorBoundary(deps.logError, deps.config.publicUrl))
    .use(edgeHeaders())
    .use(dashboardRequestGuard(deps.config))
    .use(accessGuard(deps.accounts, deps.engine))
    .use(healthRoutes(deps))
    .use(metricsRoutes(deps))
    .use(errorDocsRoutes())
    .use(apiDocsRoutes())
    .use(authRoutes(deps))
    .use(oidcRoutes(deps))
    .use(userRoutes(deps))
    .use(teamRoutes(deps))
    .use(auditRoutes(deps))
    .use(connectionRoutes(deps))
    .use(ingestRoutes(deps, inFlight))
    .use(jobReadRoutes(deps))
    .use(savedViewRoutes(deps))
    .use(queueRoutes(deps))
    .use(workerRoutes(deps))
    .use(taskMetricsRoutes(deps))
    .use(jobActionRoutes(deps))
    .use(queueControlRoutes(deps))
    .use(workerControlRoutes(deps))
    .use(commandRoutes(deps))
    .use(alertRoutes(deps))
    .use(agentRoutes(deps, inFlight))
    .use(streamRoutes(deps))
    .use(adminBackupRoutes(deps))
    .use(uiRoutes());
}

export type App = ReturnType<typeof createApp>;
