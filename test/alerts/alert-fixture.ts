/**
 * An in-memory app with a connection, a channel and rules made through the routes, a log
 * that keeps every record (to replay it into a second engine), and the injected clock:
 * alert tests move time by hand and evaluate when they choose.
 */
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog, type EngineRecord } from '../../actors/engine.ts';
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { testApp, type TestAppOptions } from '../support/test-app.ts';

/** Names resolve to a public documentation address: no test depends on DNS. */
export const PUBLIC_RESOLVER = async () => [{ address: '93.184.216.34', family: 4 }];

export async function alertFixture(options: TestAppOptions = {}) {
  const records: EngineRecord[] = [];
  const t = await testApp({ ...options, alerts: { resolve: PUBLIC_RESOLVER, ...options.alerts }, log: { append: (record) => (records.push(structuredClone(record as EngineRecord)), inMemoryLog.append(record)) } });
  const cookie = await t.login();
  const connection = await t.createConnection(cookie, 'prod');

  async function createChannel(body: Record<string, unknown> = {}) {
    const created = await t.request('POST', '/api/alert-channels', { body: { connectionId: connection.id, name: 'ops', url: 'http://hooks.example.com/jobwatch', format: 'json', ...body }, headers: { cookie } });
    if (created.status !== 201) throw new Error(`create channel: ${created.status} ${created.text}`);
    return created.json as { channel: { id: string }; secret: string };
  }

  async function createRule(body: Record<string, unknown>) {
    const created = await t.request('POST', '/api/alert-rules', { body: { connectionId: connection.id, name: `rule ${String(body.kind)}`, channelIds: [], ...body }, headers: { cookie } });
    if (created.status !== 201) throw new Error(`create rule: ${created.status} ${created.text}`);
    return created.json as { id: string };
  }

  const book = () => t.engine.connection(connection.id)!.alerts;
  const stateOf = (ruleId: string) => book().stateOf(ruleId);
  const pending = () => [...book().pending.values()];
  const evaluate = () => t.alerts.evaluate([connection.id]);
  /** Sends until nothing is due (each pass sends at most a connection's share of slots). */
  const sendAllDue = async () => {
    for (let pass = 0; pass < 100 && book().dueDeliveries(t.clock.nowMs()).length > 0; pass++) await t.alertRunner.sendDue();
  };
  const ingest = async (events: unknown[]) => {
    const answer = await t.ingest(connection.apiKey, events);
    if (answer.status !== 200 || answer.json.accepted !== events.length) throw new Error(`ingest: ${answer.status} ${answer.text}`);
  };

  /** A second engine built from every record so far, as a restart's replay builds it. */
  function replayed(): Engine {
    const engine = new Engine({ clock: new ManualClock(t.clock.nowMs()), log: inMemoryLog, limits: t.engine.limits });
    // as recovery replays them: each record's shape checked first
    for (const record of records) engine.replay(structuredClone(record));
    return engine;
  }

  /** A second engine restored from a snapshot of the first, as a restart after a snapshot. */
  function restored(edit: (chunk: SnapshotChunk) => SnapshotChunk = (chunk) => chunk): Engine {
    const engine = new Engine({ clock: new ManualClock(t.clock.nowMs()), log: inMemoryLog, limits: t.engine.limits });
    const restorer = engine.restorer();
    for (const chunk of t.engine.takeSnapshot().chunks) restorer.restore(edit(structuredClone(chunk)));
    restorer.snapshotEnded({ wholeState: true });
    restorer.reconcileWithAccounts();
    return engine;
  }

  return { t, cookie, connection, records, createChannel, createRule, book, stateOf, pending, evaluate, sendAllDue, ingest, replayed, restored };
}
