/**
 * Saved views of the jobs list: a name for a set of filters and a sort, owned by a team and
 * shared with its members. They are accounts records (the team is an account's), so they
 * survive restarts through the log and snapshots, and go when their team goes. What the
 * filters may say is the jobs list's own rule, checked where a view is saved (the route
 * validates them as `GET /api/jobs` does); here only how much a view may hold is bounded.
 */
import { DomainError, validationError } from '../domain-error.ts';
import { newId } from '../ids.ts';
import type { AccountsRecord, SavedView } from './account-records.ts';

export const VIEWS_PER_TEAM_MAX = 200;
export const VIEW_NAME_CHARS_MAX = 100;
export const VIEW_PARAMS_MAX = 16;
export const VIEW_PARAM_KEY_CHARS_MAX = 128;
export const VIEW_PARAM_VALUE_CHARS_MAX = 1_000;

export type { SavedView };

type ViewRecord = Extract<AccountsRecord, { t: 'view.saved' | 'view.deleted' }>;
type ViewSaved = Extract<AccountsRecord, { t: 'view.saved' }>;

export class SavedViewBook {
  private readonly views = new Map<string, SavedView>();
  private readonly ofTeam = new Map<string, Map<string, SavedView>>();

  get(viewId: string): SavedView | undefined {
    return this.views.get(viewId);
  }

  /** A team's views by name. */
  viewsOf(teamId: string): SavedView[] {
    return [...(this.ofTeam.get(teamId)?.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  get size(): number {
    return this.views.size;
  }

  decideCreate(teamId: string, name: string, params: Record<string, string>, userId: string, nowMs: number): ViewSaved {
    const trimmed = this.checkedName(teamId, name, null);
    if ((this.ofTeam.get(teamId)?.size ?? 0) >= VIEWS_PER_TEAM_MAX) throw new DomainError('CONFLICT', `a team can keep at most ${VIEWS_PER_TEAM_MAX} saved views; delete one first`);
    return { t: 'view.saved', view: { id: newId(), teamId, name: trimmed, params: checkedParams(params), createdBy: userId, updatedBy: userId, createdAtMs: nowMs, updatedAtMs: nowMs } };
  }

  /** A new name, new filters, or both, for an existing view. */
  decideUpdate(viewId: string, change: { name?: string; params?: Record<string, string> }, userId: string, nowMs: number): ViewSaved {
    const view = this.existing(viewId);
    const name = change.name === undefined ? view.name : this.checkedName(view.teamId, change.name, view.id);
    const params = change.params === undefined ? view.params : checkedParams(change.params);
    return { t: 'view.saved', view: { ...view, name, params, updatedBy: userId, updatedAtMs: nowMs } };
  }

  decideDelete(viewId: string): AccountsRecord {
    this.existing(viewId);
    return { t: 'view.deleted', viewId };
  }

  evolve(record: ViewRecord): void {
    if (record.t === 'view.deleted') {
      const view = this.views.get(record.viewId);
      if (view === undefined) return;
      this.views.delete(view.id);
      this.ofTeam.get(view.teamId)?.delete(view.id);
      return;
    }
    const { view } = record;
    this.views.set(view.id, view);
    let team = this.ofTeam.get(view.teamId);
    if (team === undefined) this.ofTeam.set(view.teamId, (team = new Map()));
    team.set(view.id, view);
  }

  /** A deleted team's views go with it. */
  removeTeam(teamId: string): void {
    for (const viewId of this.ofTeam.get(teamId)?.keys() ?? []) this.views.delete(viewId);
    this.ofTeam.delete(teamId);
  }

  toSnapshot(): SavedView[] {
    return [...this.views.values()];
  }

  restore(views: readonly SavedView[]): void {
    for (const view of views) this.evolve({ t: 'view.saved', view });
  }

  private existing(viewId: string): SavedView {
    const view = this.views.get(viewId);
    if (view === undefined) throw new DomainError('NOT_FOUND', 'view not found');
    return view;
  }

  /** Names are unique within a team, whatever their case. */
  private checkedName(teamId: string, name: string, selfId: string | null): string {
    const trimmed = name.trim();
    if (trimmed === '') throw validationError('name', 'must not be empty');
    if (trimmed.length > VIEW_NAME_CHARS_MAX) throw validationError('name', `must be at most ${VIEW_NAME_CHARS_MAX} characters`);
    for (const other of this.ofTeam.get(teamId)?.values() ?? []) {
      if (other.id !== selfId && other.name.toLowerCase() === trimmed.toLowerCase()) throw new DomainError('CONFLICT', `the team already has a view named '${other.name}'`);
    }
    return trimmed;
  }
}

function checkedParams(params: Record<string, string>): Record<string, string> {
  const entries = Object.entries(params);
  if (entries.length > VIEW_PARAMS_MAX) throw validationError('params', `must have at most ${VIEW_PARAMS_MAX} parameters`);
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > VIEW_PARAM_KEY_CHARS_MAX) throw validationError('params', `a parameter's name must be 1 to ${VIEW_PARAM_KEY_CHARS_MAX} characters`);
    if (typeof value !== 'string' || value.length > VIEW_PARAM_VALUE_CHARS_MAX) throw validationError(`params.${key}`, `must be a text of at most ${VIEW_PARAM_VALUE_CHARS_MAX} characters`);
  }
  return Object.fromEntries(entries);
}
