/** One webhook channel: where it sends, "send a test", delete, and what became of its last deliveries. */
import { useSignal } from '@preact/signals';
import { api } from '../../api/client.ts';
import type { PublicChannel, PublicConnection, TestDelivery } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';
import { TimeText } from '../../components/time-text.tsx';

const SHOWN_FIRST = 10;

export function ChannelCard(props: { channel: PublicChannel; connection: PublicConnection | undefined; onChanged: () => void; onDelete: () => void }) {
  const { channel } = props;
  const testing = useSignal(false);
  const error = useSignal<unknown>(null);
  const showAll = useSignal(false);
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
  const deliveries = showAll.value ? channel.deliveries : channel.deliveries.slice(0, SHOWN_FIRST);
  return (
    <section class="card channel-card" aria-label={`Channel ${channel.name}`}>
      <div class="row">
        <div>
          <h3>
            {channel.name} <span class="badge">{channel.format}</span>
          </h3>
          <div class="mono url muted">{channel.url}</div>
          <div class="hint">
            {props.connection?.name ?? channel.connectionId}
            {channel.pending > 0 && ` · ${channel.pending} waiting to be sent`}
          </div>
        </div>
        <div class="actions">
          <button type="button" class="small" onClick={() => void sendTest()} disabled={testing.value}>
            {testing.value ? 'Sending…' : 'Send a test'}
          </button>
          <button type="button" class="danger small" onClick={props.onDelete} aria-label={`Delete channel ${channel.name}`}>
            Delete
          </button>
        </div>
      </div>
      <ErrorText error={error.value} />
      {channel.deliveries.length === 0 ? (
        <p class="muted">No delivery yet.</p>
      ) : (
        <table class="deliveries" aria-label={`Deliveries of ${channel.name}`}>
          <thead>
            <tr>
              <th>When</th>
              <th>Notice</th>
              <th>Attempt</th>
              <th>Outcome</th>
              <th>Answer</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((attempt) => (
              <tr key={`${attempt.deliveryId}-${attempt.attempt}`}>
                <td>
                  <TimeText iso={attempt.at} />
                </td>
                <td>{attempt.status}</td>
                <td class="num">{attempt.attempt}</td>
                <td class={`outcome-${attempt.outcome}`}>{attempt.outcome}</td>
                <td class="ellipsis" title={attempt.error ?? undefined}>
                  {attempt.error ?? `HTTP ${attempt.httpStatus}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {channel.deliveries.length > SHOWN_FIRST && (
        <button type="button" class="small" onClick={() => (showAll.value = !showAll.value)}>
          {showAll.value ? 'Show fewer' : `Show all ${channel.deliveries.length}`}
        </button>
      )}
    </section>
  );
}
