/**
 * The shapes the dashboard reads, taken from the service's own view models (type-only
 * imports: nothing of the server is bundled), so a contract change fails the type check.
 */
import type { JobListPage } from '../../../actors/queries/job-list.ts';
import type { PagedResult } from '../../../actors/queries/paged-list.ts';
import type { PublicUser } from '../../../actors/services/account-service.ts';
import type { PublicActionResult } from '../../../actors/services/job-action-service.ts';
import type { PublicConnection } from '../../../actors/services/connection-service.ts';
import type { JobDetail, JobListItem, LastCommand } from '../../../actors/views/job-view.ts';
import type { QueueStreamItem, QueueView } from '../../../actors/views/queue-view.ts';
import type { WorkerView } from '../../../actors/views/worker-view.ts';
import type { AlertsOverview, DescribedMeasure, PublicAlert, PublicChannel, PublicDeliveryAttempt, PublicRule } from '../../../actors/services/alert-service.ts';
import type { AlertKind, ChannelFormat } from '../../../actors/alerts/alert-model.ts';

export type { AlertKind, AlertsOverview, ChannelFormat, DescribedMeasure, PublicAlert, PublicChannel, PublicDeliveryAttempt, PublicRule };
export interface CreatedChannel {
  channel: PublicChannel;
  secret: string;
}
export interface TestDelivery {
  deliveryId: string;
  attempt: PublicDeliveryAttempt | null;
  /** the connection's own sends held it past 5 s: it is sent in its turn */
  waiting: boolean;
}

export type { JobDetail, JobListItem, JobListPage, LastCommand, PublicActionResult, PublicConnection, PublicUser, QueueStreamItem, QueueView, WorkerView };

export type QueuePage = PagedResult<QueueView>;
export type WorkerPage = PagedResult<WorkerView>;
export interface Me {
  user: PublicUser;
  connections: PublicConnection[];
}
export interface CreatedConnection {
  connection: PublicConnection;
  apiKey: string;
}
export interface BulkResults {
  results: PublicActionResult[];
}
