/**
 * The use cases the routes call, over the opened engine: the people's (accounts,
 * connections, teams, users, the audit log, single sign-on: people-services.ts), job
 * actions, the live stream, alerts, task metrics, and the edge that evaluates alerts and sends their
 * webhooks (on the nodes the mode says).
 */
import { AlertService } from '../../actors/services/alert-service.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import { TaskMetricsService } from '../../actors/services/task-metrics-service.ts';
import { LiveUpdates } from '../../actors/live/live-updates.ts';
import { systemClock } from '../../actors/clock.ts';
import { createAlertEdge, type AlertEdge } from '../alerts/alert-edge.ts';
import type { Config } from '../config.ts';
import { LIVE_UPDATES_DEFAULTS } from '../live-defaults.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceObserver } from '../metrics/service-observer.ts';
import type { OpenedEngine } from '../open-engine.ts';
import type { ServiceMode } from './service-mode.ts';
import { peopleServices, type PeopleServices } from './people-services.ts';

export interface AppServices extends PeopleServices {
  jobActions: JobActionService;
  live: LiveUpdates;
  alerts: AlertService;
  alertDelivery: AlertEdge;
  taskMetrics: TaskMetricsService;
}

export function createAppServices(opened: OpenedEngine, config: Config, log: LogLine, mode: ServiceMode, observer: ServiceObserver): AppServices {
  const { engine } = opened;
  const people = peopleServices(engine, config, opened.sessionSecret, log);
  const jobActions = new JobActionService(engine, people.connections);
  const live = new LiveUpdates(engine, systemClock, {
    ...LIVE_UPDATES_DEFAULTS,
    hub: { ...LIVE_UPDATES_DEFAULTS.hub, ringBufferBytesMax: config.streamResumeBufferBytesMax },
    streamsPerUserMax: config.streamsPerUserMax,
    resumeGraceMs: config.streamResumeGraceMs,
    log,
    onStreamEnd: (reason) => observer.streamEnded(reason),
    elsewhere: mode.liveElsewhere,
  });
  const alerts = new AlertService(engine, config.publicUrl);
  const alertDelivery = createAlertEdge({ engine, alerts, config, observer, log, writes: mode.writesConnectionsOf(opened) });
  return { ...people, jobActions, live, alerts, alertDelivery, taskMetrics: new TaskMetricsService(engine, people.connections) };
}
