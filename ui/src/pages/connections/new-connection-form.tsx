/** The form that creates a connection in a team the user is an admin of; for anyone else, why they cannot. */
import { adminTeams } from '../../lib/roles.ts';

export function NewConnectionForm({ busy, onCreate }: { busy: boolean; onCreate: (event: SubmitEvent) => void }) {
  return (
    <>
      {adminTeams().length > 0 ? (
        <form class="form-row card" onSubmit={onCreate}>
          <label>
            <span>New connection name</span>
            <input name="name" required maxLength={255} placeholder="production" />
          </label>
          <label>
            <span>Team</span>
            <select name="teamId">
              {adminTeams().map((team) => (
                <option key={team.id} value={team.id}>
                  {team.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary" disabled={busy}>
            Create connection
          </button>
        </form>
      ) : (
        <p class="hint">Only an admin of a team creates its connections (and so their API keys); you are not an admin of any team.</p>
      )}
    </>
  );
}
