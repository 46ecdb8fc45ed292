/** The webhook channels: add one (its signing secret shown once), and each channel's card. */
import { useSignal } from '@preact/signals';
import type { CreatedChannel, PublicChannel } from '../../api/types.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ShownOnce } from '../../components/shown-once.tsx';
import { connections } from '../../session.ts';
import { ChannelCard } from './channel-card.tsx';
import { NewChannelForm } from './new-channel-form.tsx';
import { adminConnections, NOT_AN_ADMIN, whyNotChange } from './alert-roles.ts';

export function ChannelsSection(props: { channels: PublicChannel[]; onChanged: () => Promise<unknown>; onDelete: (channel: PublicChannel) => void }) {
  const created = useSignal<CreatedChannel | null>(null);
  return (
    <>
      <h2>Channels</h2>
      {adminConnections().length === 0 ? (
        <p class="hint">{NOT_AN_ADMIN}</p>
      ) : (
        <NewChannelForm
          onCreated={(channel) => {
            created.value = channel;
            return props.onChanged();
          }}
        />
      )}
      {created.value && (
        <ShownOnce
          title={`Signing secret of ${created.value.channel.name}`}
          secret={created.value.secret}
          what="secret"
          testId="channel-secret"
          note={<>Every request carries <code>X-Jobwatch-Signature: sha256=…</code>, the HMAC-SHA256 of the body with this secret.</>}
          onDismiss={() => (created.value = null)}
        />
      )}
      {props.channels.length === 0 ? (
        <EmptyState title="No channel yet" />
      ) : (
        props.channels.map((channel) => (
          <ChannelCard
            key={channel.id}
            whyNot={whyNotChange(channel.connectionId)}
            channel={channel}
            connection={connections.value.find((connection) => connection.id === channel.connectionId)}
            onChanged={() => void props.onChanged()}
            onDelete={() => props.onDelete(channel)}
          />
        ))
      )}
    </>
  );
}
