/**
 * Commands on jobs over the jobs a user may read: revoke and retry, single and bulk, with
 * the contract's answers, and run now, delete and kill, answered with their command. Ids
 * are grouped by the connection that owns them; each group is one decision and one record,
 * and every id gets its own result in the order asked. Acting needs the operator role on
 * every connection the ids are found in (the "may operate" check): one job the role does
 * not allow refuses the whole request (403), so a bulk action is never carried out in part
 * for lack of a role.
 */
import type { Access } from '../accounts/access.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import { COMMAND_VERBS, type JobCommandType } from '../connection/command-types.ts';
import { notFound, type ActionResult } from '../connection/job-actions.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import type { ConnectionService } from './connection-service.ts';

/** The 202 of a command: its id, for `GET /api/commands/{id}` and the stream's `command` events. */
export interface CommandAccepted {
  /** null when the service asked for one retry per failed job instead (Celery's "retry all failed") */
  commandId: string | null;
  /** then: how many retries it asked for */
  retriesRequested?: number;
}

export type PublicActionResult = { id: string; success: true; state: string } | { id: string; success: false; error: string };

export class JobActionService {
  constructor(
    private readonly engine: Engine,
    private readonly connections: ConnectionService,
  ) {}

  async bulk(access: Access, action: JobCommandType, ids: readonly string[]): Promise<PublicActionResult[]> {
    return (await this.apply(access, action, ids)).map(toPublic);
  }

  /** One job: a refusal is an error response (409 or 404) rather than a result entry. */
  async single(access: Access, action: JobCommandType, id: string): Promise<PublicActionResult> {
    return toPublic(await this.one(access, action, id));
  }

  /** One job's command that answers with the command (run now, delete, kill): 202. */
  async command(access: Access, action: JobCommandType, id: string): Promise<CommandAccepted> {
    return { commandId: (await this.one(access, action, id)).commandId };
  }

  private async one(access: Access, action: JobCommandType, id: string): Promise<ActionResult & { success: true }> {
    const [result] = await this.apply(access, action, [id]);
    if (result === undefined || result.success) return result!;
    throw new DomainError(result.reason === 'not-found' ? 'NOT_FOUND' : 'INVALID_STATE', result.error);
  }

  private async apply(access: Access, action: JobCommandType, ids: readonly string[]): Promise<ActionResult[]> {
    this.engine.refuseWhenHalted();
    const actors = this.connections.readableActors(access, undefined);
    const idsByActor = new Map<ConnectionActor, string[]>();
    for (const id of ids) {
      const owner = actors.find((actor) => actor.jobs.rowOf(id) >= 0);
      if (owner !== undefined) idsByActor.set(owner, [...(idsByActor.get(owner) ?? []), id]);
    }
    for (const actor of idsByActor.keys()) this.connections.requireOperator(access, actor.connectionId, `${COMMAND_VERBS[action]} jobs`);
    const resultById = new Map<string, ActionResult[]>();
    const commits: Promise<void>[] = [];
    for (const [actor, actorIds] of idsByActor) {
      const { results, record } = actor.decideJobAction(action, actorIds, this.engine.clock.nowMs());
      for (const result of results) resultById.set(result.id, [...(resultById.get(result.id) ?? []), result]);
      if (record !== null) commits.push(this.engine.commit(record));
    }
    await Promise.all(commits);
    // A repeated id takes its results in order of appearance.
    return ids.map((id) => resultById.get(id)?.shift() ?? notFound(id));
  }
}

function toPublic(result: ActionResult): PublicActionResult {
  return result.success ? { id: result.id, success: true, state: result.state } : { id: result.id, success: false, error: result.error };
}
