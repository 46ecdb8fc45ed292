/** One webhook channel: where it sends, "send a test", delete, and what became of its last deliveries. */
import { useSignal } from '@preact/signals';
import { api } from '../../api/client.ts';
import type { PublicChannel, PublicConnection, TestDelivery } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { STATUS_CLASS } from './status-class.ts';

/** `whyNot`: why the user may not test or delete it (their role), or null. */
export function ChannelCard(props: { channel: PublicChannel; connection: PublicConnection | undefined; whyNot: string | null; onChanged: () => void; onDelete: () => void }) {
  const { channel } = props;
  const testing = useSignal(false);
  const error = useSignal<unknown>(null);
  const sendTest = async () => {
    testing.value = true;
    error.value = null;
    try {
      await api<TestDelivery>('POST', `/api/alert-channels/${encodeURIComponent(channel.id)}/test`);
      props.onChanged();
    } catch (failure) {
      error.value = failure;
    } finally {
      testing.value = false;
    }
  };
  return (
    <section class="card" aria-label={`Channel ${channel.name}`}>
      <div class="row">
        <div>
          <h3>
            {channel.name} <span class="badge">{channel.format}</span>
          </h3>
          <div class="mono muted">{channel.url}</div>
          <div class="hint">
            {props.connection?.name ?? channel.connectionId}
            {channel.pending > 0 && ` · ${channel.pending} waiting to be sent`}
            {` · links open ${channel.linkBase ?? 'relative to the dashboard (set PUBLIC_URL)'}`}
          </div>
        </div>
        <div class="actions">
          <button type="button" class="small" onClick={() => void sendTest()} disabled={testing.value || props.whyNot !== null} title={props.whyNot ?? undefined}>
            {testing.value ? 'Sending…' : 'Send a test'}
          </button>
          <button type="button" class="danger small" onClick={props.onDelete} disabled={props.whyNot !== null} title={props.whyNot ?? undefined} aria-label={`Delete channel ${channel.name}`}>
            Delete
          </button>
        </div>
      </div>
      <ErrorText error={error.value} />
      {channel.deliveries.length === 0 ? (
        <p class="muted">No delivery yet.</p>
      ) : (
        <ul class="deliveries" aria-label={`Deliveries of ${channel.name}`}>
          {channel.deliveries.map((attempt) => (
            <li key={`${attempt.deliveryId}-${attempt.attempt}`}>
              <TimeText iso={attempt.at} /> {attempt.status} #{attempt.attempt} <span class={`badge ${STATUS_CLASS[attempt.outcome]}`}>{attempt.outcome}</span>{' '}
              <span class="muted">{attempt.error ?? `HTTP ${attempt.httpStatus}`}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
