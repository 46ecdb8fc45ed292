/**
 * The controls of queues, workers and tasks, asked by a user of the dashboard or the API
 * and carried out by the connection's agent: find the target among what the user may
 * read, the "may operate" check, then one record that queues the command. The answer is
 * the command (202); what became of it arrives later, on the target and the live stream.
 * Also what the dashboard reads of them: a command by id, the agents' capabilities, and
 * what a clean would remove.
 */
import type { Access } from '../accounts/access.ts';
import type { CleanParams, ConcurrencyParams, PoolParams, QueueCommandType, RateLimitParams, WorkerCommandType } from '../connection/command-types.ts';
import { COMMAND_VERBS } from '../connection/command-types.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { ControlRequestedRecord } from '../connection/connection-records.ts';
import { RETRY_FAILED_PER_JOB } from '../connection/control-availability.ts';
import type { Queue } from '../connection/queue-store.ts';
import type { Worker } from '../connection/worker-store.ts';
import { DomainError, validationError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import { cleanEstimate, failedJobIdsOf, type CleanEstimate } from '../queries/queue-jobs.ts';
import { commandViewOf, type CommandView } from '../views/command-view.ts';
import { toPublicCapabilities, type PublicCapabilities } from './agent-service.ts';
import type { ConnectionService } from './connection-service.ts';
import type { CommandAccepted } from './job-action-service.ts';

export type QueueParams = CleanParams | ConcurrencyParams | undefined;

export class ControlService {
  constructor(
    private readonly engine: Engine,
    private readonly connections: ConnectionService,
  ) {}

  async queueCommand(access: Access, queueId: string, type: QueueCommandType, params: QueueParams): Promise<CommandAccepted> {
    this.engine.refuseWhenHalted();
    const { actor, queue } = this.queueOf(access, queueId);
    this.connections.requireOperator(access, actor.connectionId, `${COMMAND_VERBS[type]} queues`);
    if (type === 'queue.clean') checkClean(params as CleanParams);
    if (type === 'queue.retry_failed' && RETRY_FAILED_PER_JOB.has(queue.framework)) return this.retryEachFailed(actor, queue);
    const command = params === undefined ? { type, queue: queue.name } : { type, queue: queue.name, params };
    return this.commit(actor.decideControl(command as Parameters<ConnectionActor['decideControl']>[0], this.engine.clock.nowMs()));
  }

  async workerCommand(access: Access, workerId: string, type: WorkerCommandType, params: PoolParams | undefined): Promise<CommandAccepted> {
    this.engine.refuseWhenHalted();
    const { actor, worker } = this.workerOf(access, workerId);
    this.connections.requireOperator(access, actor.connectionId, `${COMMAND_VERBS[type]} workers`);
    const target = { workerId: worker.externalId, hostname: worker.hostname, pid: worker.pid };
    const command = params === undefined ? { type, ...target } : { type, ...target, params };
    return this.commit(actor.decideControl(command as Parameters<ConnectionActor['decideControl']>[0], this.engine.clock.nowMs()));
  }

  /** A task is named, not stored: any name the connection's jobs carry (the job system says whether it has it). */
  async rateLimit(access: Access, connectionId: string, name: string, queue: string | null, params: RateLimitParams): Promise<CommandAccepted> {
    this.engine.refuseWhenHalted();
    const [actor] = this.connections.readableActors(access, connectionId);
    if (actor === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    this.connections.requireOperator(access, actor.connectionId, 'set rate limits');
    return this.commit(actor.decideControl({ type: 'task.rate_limit', name, queue, params }, this.engine.clock.nowMs()));
  }

  command(access: Access, commandId: string): CommandView {
    for (const actor of this.connections.readableActors(access, undefined)) {
      const view = commandViewOf(actor, commandId);
      if (view !== undefined) return view;
    }
    throw new DomainError('NOT_FOUND', 'command not found');
  }

  capabilities(access: Access, connectionId: string | undefined): PublicCapabilities[] {
    return this.connections
      .readableActors(access, connectionId)
      .flatMap((actor) => [...actor.capabilities.values()].map((kept) => toPublicCapabilities(actor.connectionId, kept)));
  }

  cleanEstimate(access: Access, queueId: string, params: CleanParams): CleanEstimate {
    const { actor, queue } = this.queueOf(access, queueId);
    checkClean(params);
    return cleanEstimate(actor, queue, params, this.engine.clock.nowMs());
  }

  private async commit(record: ControlRequestedRecord): Promise<CommandAccepted> {
    await this.engine.commit(record);
    return { commandId: record.command.id };
  }

  /** One retry per failed job of the queue jobwatch knows (bounded), for an agent that retries jobs one by one. */
  private async retryEachFailed(actor: ConnectionActor, queue: Queue): Promise<CommandAccepted> {
    const { ids } = failedJobIdsOf(actor, queue.name);
    const { record } = actor.decideJobAction('retry', ids, this.engine.clock.nowMs());
    if (record !== null) await this.engine.commit(record);
    return { commandId: null, retriesRequested: record?.targets.length ?? 0 };
  }

  private queueOf(access: Access, queueId: string): { actor: ConnectionActor; queue: Queue } {
    for (const actor of this.connections.readableActors(access, undefined)) {
      const queue = actor.queues.getById(queueId);
      if (queue !== undefined) return { actor, queue };
    }
    throw new DomainError('NOT_FOUND', 'queue not found');
  }

  private workerOf(access: Access, workerId: string): { actor: ConnectionActor; worker: Worker } {
    for (const actor of this.connections.readableActors(access, undefined)) {
      for (const worker of actor.workers.values()) if (worker.id === workerId) return { actor, worker };
    }
    throw new DomainError('NOT_FOUND', 'worker not found');
  }
}

/** What the model cannot say of a clean: each state once. */
function checkClean(params: CleanParams): void {
  if (params.mode === 'finished' && new Set(params.states).size !== params.states.length) throw validationError('states', 'names a state twice');
}

