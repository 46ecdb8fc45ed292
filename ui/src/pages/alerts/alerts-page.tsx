/**
 * Alerts: the rules with their state and the value now (create, edit with a preview,
 * delete), and the webhook channels with their delivery history (create with the secret
 * shown once, send a test, delete). Recent transitions are in GET /api/alerts.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { ChannelFormat, CreatedChannel, PublicChannel, PublicRule } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { STATUS_CLASS } from './status-class.ts';
import { ShownOnce } from '../../components/shown-once.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { reloadFiringAlerts } from '../../lib/firing-alerts.ts';
import { connections } from '../../session.ts';
import { ChannelCard } from './channel-card.tsx';
import { whyNotOnConnection } from '../../lib/roles.ts';

const NOT_AN_ADMIN = 'Only an admin of a team creates alert rules and channels for its connections; your role is not admin in any of your teams.';
import { RuleForm } from './rule-form.tsx';

/** The service evaluates every ALERT_EVAL_SECONDS (10 s by default): the page follows at that pace. */
const RELOAD_EVERY_MS = 10_000;

interface PageData {
  rules: PublicRule[];
  channels: PublicChannel[];
}

/** The rules and channels, and the header's firing alerts with them. */
async function loadAll(): Promise<PageData> {
  const [rules, channels] = await Promise.all([
    api<{ data: PublicRule[] }>('GET', '/api/alert-rules'),
    api<{ data: PublicChannel[] }>('GET', '/api/alert-channels'),
    reloadFiringAlerts(),
  ]);
  return { rules: rules.data, channels: channels.data };
}

export function AlertsPage() {
  const data = useSignal<PageData | null>(null);
  const error = useSignal<unknown>(null);
  const editing = useSignal<PublicRule | null>(null);
  const deleting = useSignal<{ what: 'rule' | 'channel'; id: string; name: string } | null>(null);
  const createdChannel = useSignal<CreatedChannel | null>(null);
  const channelError = useSignal<unknown>(null);

  const reload = () =>
    loadAll().then(
      (loaded) => {
        data.value = loaded;
        error.value = null;
      },
      (failure) => (error.value = failure),
    );
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), RELOAD_EVERY_MS);
    return () => clearInterval(timer);
  }, []);

  const onCreateChannel = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    channelError.value = null;
    try {
      createdChannel.value = await api<CreatedChannel>('POST', '/api/alert-channels', {
        connectionId: String(fields.get('connectionId')),
        name: String(fields.get('name')),
        url: String(fields.get('url')),
        format: String(fields.get('format')) as ChannelFormat,
      });
      form.reset();
      await reload();
    } catch (failure) {
      channelError.value = failure;
    }
  };
  const onDelete = async () => {
    const target = deleting.value!;
    deleting.value = null;
    try {
      await api('DELETE', `/api/alert-${target.what === 'rule' ? 'rules' : 'channels'}/${encodeURIComponent(target.id)}`);
      await reload();
    } catch (failure) {
      error.value = failure;
    }
  };

  const loaded = data.value;
  const channelNames = new Map((loaded?.channels ?? []).map((channel) => [channel.id, channel.name]));
  // rules and channels are changed by the admins of their connection's team; others read them
  const adminConnections = connections.value.filter((connection) => connection.role === 'admin');
  const whyNotChange = (connectionId: string) => whyNotOnConnection(connectionId, 'admin', 'change alert rules and channels');
  const columns: Column<PublicRule>[] = [
    { id: 'name', label: 'Rule', cell: (rule) => <strong>{rule.name}</strong> },
    { id: 'condition', label: 'Condition', cell: (rule) => <><span class="badge">{rule.kind.replace('_', ' ')}</span> {rule.condition}</> },
    {
      id: 'state',
      label: 'State',
      cell: (rule) => (
        <>
          <span class={`badge ${STATUS_CLASS[rule.status]}`}>{rule.status}</span>{' '}
          {rule.status === 'firing' && <span class="hint">since <TimeText iso={rule.firingSince} /></span>}
          {rule.status === 'resolved' && <span class="hint"><TimeText iso={rule.changedAt} /></span>}
        </>
      ),
    },
    { id: 'value', label: 'Value now', class: 'num', cell: (rule) => <span class={rule.current.breached ? 'error-inline' : undefined}>{rule.current.text}</span> },
    { id: 'channels', label: 'Notifies', class: 'hide-narrow', cell: (rule) => (rule.channelIds.length === 0 ? <span class="muted">nobody</span> : rule.channelIds.map((id) => channelNames.get(id) ?? id).join(', ')) },
    {
      id: 'edit',
      label: '',
      cell: (rule) => (
        <span class="actions">
          <button type="button" class="small" disabled={whyNotChange(rule.connectionId) !== null} title={whyNotChange(rule.connectionId) ?? undefined} onClick={() => (editing.value = rule)} aria-label={`Edit ${rule.name}`}>Edit</button>
          <button type="button" class="danger small" disabled={whyNotChange(rule.connectionId) !== null} title={whyNotChange(rule.connectionId) ?? undefined} onClick={() => (deleting.value = { what: 'rule', id: rule.id, name: rule.name })} aria-label={`Delete ${rule.name}`}>Delete</button>
        </span>
      ),
    },
  ];
  return (
    <>
      <div class="page-head">
        <h1>Alerts</h1>
      </div>
      <ErrorText error={error.value} />
      {loaded === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <h2>Rules</h2>
          {loaded.rules.length === 0 ? (
            <EmptyState title="No rule yet" />
          ) : (
            <DataTable label="Alert rules" rows={loaded.rules} columns={columns} />
          )}
          {editing.value !== null ? (
            <RuleForm
              key={editing.value.id}
              rule={editing.value}
              connections={connections.value}
              channels={loaded.channels}
              onSaved={() => {
                editing.value = null;
                void reload();
              }}
              onCancel={() => (editing.value = null)}
            />
          ) : adminConnections.length > 0 ? (
            <RuleForm rule={null} connections={adminConnections} channels={loaded.channels} onSaved={() => void reload()} />
          ) : (
            <p class="hint">{NOT_AN_ADMIN}</p>
          )}

          <h2>Channels</h2>
          {adminConnections.length === 0 && <p class="hint">{NOT_AN_ADMIN}</p>}
          <form class="form-row card" onSubmit={onCreateChannel} aria-label="New channel" hidden={adminConnections.length === 0}>
            <label>
              <span>Connection</span>
              <select name="connectionId">
                {adminConnections.map((connection) => (
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
          <ErrorText error={channelError.value} />
          {createdChannel.value && (
            <ShownOnce
              title={`Signing secret of ${createdChannel.value.channel.name}`}
              secret={createdChannel.value.secret}
              what="secret"
              testId="channel-secret"
              note={<>Every request carries <code>X-Jobwatch-Signature: sha256=…</code>, the HMAC-SHA256 of the body with this secret.</>}
              onDismiss={() => (createdChannel.value = null)}
            />
          )}
          {loaded.channels.length === 0 ? (
            <EmptyState title="No channel yet" />
          ) : (
            loaded.channels.map((channel) => (
              <ChannelCard
                whyNot={whyNotChange(channel.connectionId)}
                key={channel.id}
                channel={channel}
                connection={connections.value.find((connection) => connection.id === channel.connectionId)}
                onChanged={() => void reload()}
                onDelete={() => (deleting.value = { what: 'channel', id: channel.id, name: channel.name })}
              />
            ))
          )}

        </>
      )}
      {deleting.value && (
        <ConfirmDialog title={`Delete ${deleting.value.name}?`} confirmLabel={`Delete ${deleting.value.what}`} danger onConfirm={() => void onDelete()} onCancel={() => (deleting.value = null)}>
        </ConfirmDialog>
      )}
    </>
  );
}
