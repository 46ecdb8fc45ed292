/**
 * Alerts: the rules with their state and the value now (create, edit with a preview,
 * delete), and the webhook channels with their delivery history (create with the secret
 * shown once, send a test, delete). Recent transitions are in GET /api/alerts.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { PublicChannel, PublicRule } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { reloadFiringAlerts } from '../../lib/firing-alerts.ts';
import { connections } from '../../session.ts';
import { ChannelsSection } from './channels-section.tsx';
import { RuleForm } from './rule-form.tsx';
import { adminConnections, NOT_AN_ADMIN } from './alert-roles.ts';
import { ruleColumns } from './rule-columns.tsx';

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
  const columns = ruleColumns(
    channelNames,
    (rule) => (editing.value = rule),
    (rule) => (deleting.value = { what: 'rule', id: rule.id, name: rule.name }),
  );
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
          {loaded.rules.length === 0 ? <EmptyState title="No rule yet" /> : <DataTable label="Alert rules" rows={loaded.rules} columns={columns} />}
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
          ) : adminConnections().length > 0 ? (
            <RuleForm rule={null} connections={adminConnections()} channels={loaded.channels} onSaved={() => void reload()} />
          ) : (
            <p class="hint">{NOT_AN_ADMIN}</p>
          )}
          <ChannelsSection channels={loaded.channels} onChanged={reload} onDelete={(channel) => (deleting.value = { what: 'channel', id: channel.id, name: channel.name })} />
        </>
      )}
      {deleting.value && (
        <ConfirmDialog title={`Delete ${deleting.value.name}?`} confirmLabel={`Delete ${deleting.value.what}`} danger onConfirm={() => void onDelete()} onCancel={() => (deleting.value = null)}>
        </ConfirmDialog>
      )}
    </>
  );
}
