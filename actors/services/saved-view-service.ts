/**
 * Saved views of the jobs list, shared within a team: its members read them, its operators
 * and admins save, change and delete them. Someone who is not a member of the view's team
 * is told it is not found; a viewer asking to change one is refused naming the role needed.
 * A view's `connectionId` filter must name one of its team's connections.
 */
import type { Access } from '../accounts/access.ts';
import type { SavedView } from '../accounts/saved-views.ts';
import { DomainError, validationError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';

export interface PublicSavedView {
  id: string;
  teamId: string;
  name: string;
  params: Record<string, string>;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export class SavedViewService {
  constructor(private readonly engine: Engine) {}

  /** The views of the user's teams, or of one of them (`teamId`), by team and name. */
  list(access: Access, teamId?: string): PublicSavedView[] {
    const teams = access.teams().filter((grant) => teamId === undefined || grant.team.id === teamId);
    return teams.flatMap((grant) => this.engine.accounts.views.viewsOf(grant.team.id).map((view) => this.describe(view)));
  }

  async create(access: Access, input: { teamId: string; name: string; params: Record<string, string> }): Promise<PublicSavedView> {
    access.requireTeam(input.teamId, 'operator', 'save views');
    access.note(input.teamId, null);
    this.requireTeamConnection(input.teamId, input.params);
    const record = this.engine.accounts.views.decideCreate(input.teamId, input.name, input.params, access.user.id, this.engine.clock.nowMs());
    await this.engine.commit(record);
    return this.describe(this.engine.accounts.views.get(record.view.id)!);
  }

  async update(access: Access, viewId: string, change: { name?: string; params?: Record<string, string> }): Promise<PublicSavedView> {
    const view = this.changeable(access, viewId, 'change views');
    if (change.params !== undefined) this.requireTeamConnection(view.teamId, change.params);
    await this.engine.commit(this.engine.accounts.views.decideUpdate(viewId, change, access.user.id, this.engine.clock.nowMs()));
    return this.describe(this.engine.accounts.views.get(viewId)!);
  }

  async delete(access: Access, viewId: string): Promise<void> {
    this.changeable(access, viewId, 'delete views');
    await this.engine.commit(this.engine.accounts.views.decideDelete(viewId));
  }

  /** The view, when the user may change it: 404 unless a member of its team, 403 below operator. */
  private changeable(access: Access, viewId: string, doing: string): SavedView {
    const view = this.engine.accounts.views.get(viewId);
    if (view === undefined || access.teamRole(view.teamId) === null) throw new DomainError('NOT_FOUND', 'view not found');
    access.requireTeam(view.teamId, 'operator', doing);
    access.note(view.teamId, null);
    return view;
  }

  private requireTeamConnection(teamId: string, params: Record<string, string>): void {
    const connectionId = params.connectionId;
    if (connectionId === undefined) return;
    if (this.engine.accounts.connections.get(connectionId)?.teamId !== teamId) throw validationError('params.connectionId', "must be one of the team's connections");
  }

  private describe(view: SavedView): PublicSavedView {
    const creator = this.engine.accounts.users.get(view.createdBy);
    return { id: view.id, teamId: view.teamId, name: view.name, params: { ...view.params }, createdBy: creator?.email ?? null, createdAt: iso(view.createdAtMs), updatedAt: iso(view.updatedAtMs) };
  }
}
