/**
 * The team's saved views above the jobs list: each a link to the list with its filters and
 * sort (shareable as it is), the one on screen marked; "Save view" names what is on screen
 * for a team where the user is an operator or admin, and the same people delete views.
 * Viewers see the views and why they cannot save one.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, messageOf } from '../../api/client.ts';
import type { PublicSavedView } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { Link } from '../../components/link.tsx';
import { FILTER_KEYS } from '../../lib/job-filters.ts';
import { includes } from '../../lib/roles.ts';
import { route } from '../../router.ts';
import { teams } from '../../session.ts';

const VIEW_KEYS: readonly string[] = [...FILTER_KEYS, 'sortBy', 'sortOrder'];

/** The filters and sort on screen, as a view keeps them. */
function paramsOnScreen(query: URLSearchParams): Record<string, string> {
  return Object.fromEntries([...query.entries()].filter(([key, value]) => VIEW_KEYS.includes(key) && value !== ''));
}

const hrefOf = (view: PublicSavedView): string => {
  const text = new URLSearchParams(view.params).toString();
  return `/jobs${text === '' ? '' : `?${text}`}`;
};

const sameParams = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value);

export function SavedViews() {
  const views = useSignal<PublicSavedView[]>([]);
  const error = useSignal<unknown>(null);
  const naming = useSignal(false);
  const deleting = useSignal<PublicSavedView | null>(null);
  const load = () =>
    api<{ data: PublicSavedView[] }>('GET', '/api/views').then(
      (answer) => (views.value = answer.data),
      (failure) => (error.value = failure),
    );
  useEffect(() => void load(), []);
  const savers = teams.value.filter((team) => includes(team.role, 'operator'));
  const onScreen = paramsOnScreen(route.value.query);
  const teamName = (teamId: string) => teams.value.find((team) => team.id === teamId)?.name ?? 'a team';
  const severalTeams = new Set(views.value.map((view) => view.teamId)).size > 1;
  const remove = async (view: PublicSavedView) => {
    deleting.value = null;
    error.value = null;
    try {
      await api('DELETE', `/api/views/${encodeURIComponent(view.id)}`);
      await load();
    } catch (failure) {
      error.value = failure;
    }
  };
  return (
    <section class="saved-views" aria-label="Saved views">
      <span class="muted">Views:</span>
      {views.value.length === 0 && <span class="muted">none saved yet</span>}
      <ul class="view-list">
        {views.value.map((view) => (
          <li key={view.id}>
            <Link href={hrefOf(view)} class="view-link" aria-current={sameParams(view.params, onScreen) ? 'page' : undefined}>
              {view.name}
              {severalTeams && <span class="muted"> · {teamName(view.teamId)}</span>}
            </Link>
            {includes(teams.value.find((team) => team.id === view.teamId)?.role, 'operator') && (
              <button type="button" class="link-button" aria-label={`Delete view ${view.name}`} title="Delete this view" onClick={() => (deleting.value = view)}>
                ×
              </button>
            )}
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => (naming.value = true)} disabled={savers.length === 0} title={savers.length === 0 ? 'Saving a view needs the operator role in a team' : 'Save the filters and sort on screen for your team'}>
        Save view
      </button>
      {savers.length === 0 && <small class="hint why">Saving a view needs the operator role in a team; {teams.value.length === 0 ? 'you are in no team' : 'yours is viewer'}.</small>}
      {naming.value && <SaveViewForm teams={savers} params={onScreen} onSaved={() => ((naming.value = false), void load())} onCancel={() => (naming.value = false)} />}
      {deleting.value !== null && (
        <ConfirmDialog title="Delete this view?" confirmLabel="Delete view" danger onConfirm={() => void remove(deleting.value!)} onCancel={() => (deleting.value = null)}>
          <p>
            <span class="confirm-what">{deleting.value.name}</span> goes for everyone in {teamName(deleting.value.teamId)}. The jobs stay as they are.
          </p>
        </ConfirmDialog>
      )}
      <ErrorText error={error.value} />
    </section>
  );
}

function SaveViewForm(props: { teams: Array<{ id: string; name: string }>; params: Record<string, string>; onSaved: () => void; onCancel: () => void }) {
  const name = useSignal('');
  const teamId = useSignal(props.teams[0]!.id);
  const failure = useSignal<string | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    failure.value = null;
    try {
      await api('POST', '/api/views', { teamId: teamId.value, name: name.value, params: props.params });
      props.onSaved();
    } catch (error) {
      failure.value = messageOf(error);
    }
  };
  const described = Object.entries(props.params).map(([key, value]) => `${key}=${value}`).join(', ') || 'no filter, newest first';
  return (
    <form class="save-view" onSubmit={(event) => void save(event)}>
      <label>
        View name
        <input value={name.value} onInput={(event) => (name.value = event.currentTarget.value)} maxLength={100} required autofocus />
      </label>
      {props.teams.length > 1 && (
        <label>
          Team
          <select value={teamId.value} onChange={(event) => (teamId.value = event.currentTarget.value)}>
            {props.teams.map((team) => (
              <option key={team.id} value={team.id}>
                {team.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <small class="muted">Keeps: {described}</small>
      <button type="submit" class="primary">
        Save
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
      {failure.value !== null && <p class="error">{failure.value}</p>}
    </form>
  );
}
