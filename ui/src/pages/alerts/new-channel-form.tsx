/** The form that adds a webhook channel to one of the user's connections. */
import { useSignal } from '@preact/signals';
import { api } from '../../api/client.ts';
import type { ChannelFormat, CreatedChannel } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';
import { adminConnections } from './alert-roles.ts';

export function NewChannelForm(props: { onCreated: (created: CreatedChannel) => Promise<unknown> }) {
  const error = useSignal<unknown>(null);
  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    error.value = null;
    try {
      const created = await api<CreatedChannel>('POST', '/api/alert-channels', {
        connectionId: String(fields.get('connectionId')),
        name: String(fields.get('name')),
        url: String(fields.get('url')),
        format: String(fields.get('format')) as ChannelFormat,
      });
      form.reset();
      await props.onCreated(created);
    } catch (failure) {
      error.value = failure;
    }
  };
  return (
    <>
      <form class="form-row card" onSubmit={onSubmit} aria-label="New channel">
        <label>
          <span>Connection</span>
          <select name="connectionId">
            {adminConnections().map((connection) => (
              <option key={connection.id} value={connection.id}>
                {connection.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Name</span>
          <input name="name" required maxLength={100} />
        </label>
        <label>
          <span>Webhook URL</span>
          <input name="url" type="url" required maxLength={2048} size={40} />
        </label>
        <label>
          <span>Format</span>
          <select name="format">
            <option value="json">JSON</option>
            <option value="slack">Slack / Mattermost</option>
          </select>
        </label>
        <button type="submit" class="primary">
          Add channel
        </button>
      </form>
      <ErrorText error={error.value} />
    </>
  );
}
