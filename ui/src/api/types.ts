/**
 * The shapes the dashboard reads, taken from the service's own view models (type-only
 * imports: nothing of the server is bundled), so a contract change fails the type check.
 */
import type { JobListPage } from '../../../actors/queries/job-list.ts';
import type { PagedResult } from '../../../actors/queries/paged-list.ts';
import type { PublicUser } from '../../../actors/services/account-service.ts';
import type { PublicMember, PublicTeam } from '../../../actors/services/team-service.ts';
import type { PublicSavedView } from '../../../actors/services/saved-view-service.ts';
import type { UserSummary } from '../../../actors/services/user-service.ts';
import type { AuditPage, PublicAuditEntry } from '../../../actors/services/audit-service.ts';
import type { Role } from '../../../actors/accounts/roles.ts';
import type { CommandAccepted, PublicActionResult } from '../../../actors/services/job-action-service.ts';
import type { PublicCapabilities } from '../../../actors/services/agent-service.ts';
import type { CommandView } from '../../../actors/views/command-view.ts';
import type { CleanEstimate } from '../../../actors/queries/queue-jobs.ts';
import type { PublicConnection } from '../../../actors/services/connection-service.ts';
import type { JobDetail, JobListItem, LastCommand } from '../../../actors/views/job-view.ts';
import type { Workflow, WorkflowNode } from '../../../actors/queries/workflow.ts';
import type { QueueStreamItem, QueueView } from '../../../actors/views/queue-view.ts';
import type { WorkerView } from '../../../actors/views/worker-view.ts';
import type { AlertsOverview, DescribedMeasure, PublicAlert, PublicChannel, PublicDeliveryAttempt, PublicRule } from '../../../actors/services/alert-service.ts';
import type { AlertKind, ChannelFormat } from '../../../actors/alerts/alert-model.ts';
import type { PublicMarker, SeriesAnswer, TasksAnswer, TaskSortKey } from '../../../actors/services/task-metrics-answers.ts';
import type { SeriesPoint, SparkMeasure, TaskRow } from '../../../actors/metrics/task-metrics-query.ts';

export type { PublicMarker, SeriesAnswer, SeriesPoint, SparkMeasure, TaskRow, TasksAnswer, TaskSortKey };

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

export type { Workflow, WorkflowNode };
export type { CleanEstimate, CommandAccepted, CommandView, JobDetail, JobListItem, JobListPage, LastCommand, PublicActionResult, PublicCapabilities, PublicConnection, PublicUser, QueueStreamItem, QueueView, WorkerView };
export type { AuditPage, PublicAuditEntry, PublicMember, PublicSavedView, PublicTeam, Role, UserSummary };
/** A single-use link that sets a password, as the service answers it. */
export interface PasswordLinkAnswer {
  url: string;
  purpose: 'invite' | 'reset';
  expiresAt: string;
}
export interface CreatedUser {
  user: UserSummary;
  invite: PasswordLinkAnswer | null;
}

export type QueuePage = PagedResult<QueueView>;
export type WorkerPage = PagedResult<WorkerView>;
export interface Me {
  user: PublicUser;
  teams: PublicTeam[];
  connections: PublicConnection[];
}
export interface CreatedConnection {
  connection: PublicConnection;
  apiKey: string;
}
export interface BulkResults {
  results: PublicActionResult[];
}
