/**
 * The link a webhook carries is absolute: under PUBLIC_URL when it is set, else under the
 * dashboard address the channel was created through (its host and scheme as the same-origin
 * guard judges them: forwarded ones only from a trusted proxy). The address is part of the
 * channel's record, so a replay and a snapshot keep it.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { linkBaseOf } from '../../actors/alerts/alert-model.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { alertFixture } from './alert-fixture.ts';
import { webhookReceiver } from './webhook-receiver.ts';

const receivers: Array<{ stop: () => void }> = [];
afterEach(() => {
  for (const receiver of receivers.splice(0)) receiver.stop();
});

function receiver() {
  const started = webhookReceiver();
  receivers.push(started);
  return started;
}

/** The links of every request the receiver got: the json `link`, or the URL in Slack's `<url|label>`. */
function linksOf(received: Array<{ body: string }>): string[] {
  return received.map(({ body }) => {
    const payload = JSON.parse(body) as { link?: string; text?: string };
    return payload.link ?? /<([^|>]+)\|/.exec(payload.text ?? '')![1]!;
  });
}

describe('notice links', () => {
  test('without PUBLIC_URL, a notice links under the address the channel was created through, json and Slack alike', async () => {
    const hooks = receiver();
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    const headers = { cookie: f.cookie, host: 'jobs.example.test:8080' };
    const make = (format: string) =>
      f.t.request('POST', '/api/alert-channels', { body: { connectionId: f.connection.id, name: format, url: hooks.url(), format }, headers });
    const json = (await make('json')).json;
    const slack = (await make('slack')).json;
    expect([json.channel.linkBase, slack.channel.linkBase]).toEqual(['http://jobs.example.test:8080', 'http://jobs.example.test:8080']);

    await f.createRule({ kind: 'failure_rate', threshold: 0.2, windowSeconds: 300, channelIds: [json.channel.id, slack.channel.id] });
    await f.ingest(Array.from({ length: 5 }, (_, i) => jobEvent(f.connection.id, T0 - 1_000, { externalId: `f-${i}`, state: 'failed' })));
    await f.evaluate();
    await f.sendAllDue();
    const firing = `http://jobs.example.test:8080/jobs?connectionId=${f.connection.id}&state=failed`;
    expect(linksOf(hooks.received)).toEqual([firing, firing]);

    const test = await f.t.request('POST', `/api/alert-channels/${json.channel.id}/test`, { headers: { cookie: f.cookie } });
    expect(test.json.attempt.outcome).toBe('delivered');
    expect(linksOf(hooks.received).at(-1)).toBe('http://jobs.example.test:8080/alerts');
  });

  test('PUBLIC_URL, when set, is the base of every link whatever address the channel was created through', async () => {
    const hooks = receiver();
    const f = await alertFixture({ alerts: { allowPrivate: true }, publicUrl: 'https://jobwatch.example.com' });
    const created = await f.t.request('POST', '/api/alert-channels', {
      body: { connectionId: f.connection.id, name: 'ops', url: hooks.url(), format: 'json' },
      headers: { cookie: f.cookie, host: 'internal-name:3000' },
    });
    expect(created.json.channel.linkBase).toBe('https://jobwatch.example.com');
    await f.t.request('POST', `/api/alert-channels/${created.json.channel.id}/test`, { headers: { cookie: f.cookie } });
    expect(linksOf(hooks.received)).toEqual(['https://jobwatch.example.com/alerts']);
  });

  test('behind a trusted proxy the forwarded host and scheme count; from any other peer they are ignored', async () => {
    for (const trusted of [true, false]) {
      const f = await alertFixture({ alerts: { allowPrivate: true }, trustedProxies: trusted ? ['127.0.0.1'] : [] });
      const served = f.t.serve();
      try {
        const response = await fetch(`${served.baseUrl}/api/alert-channels`, {
          method: 'POST',
          headers: { cookie: f.cookie, 'content-type': 'application/json', 'x-forwarded-host': 'jobs.example.com', 'x-forwarded-proto': 'https' },
          body: JSON.stringify({ connectionId: f.connection.id, name: 'ops', url: 'http://hooks.example.com/x', format: 'json' }),
        });
        expect(response.status).toBe(201);
        const { channel } = (await response.json()) as { channel: { linkBase: string } };
        expect(channel.linkBase).toBe(trusted ? 'https://jobs.example.com' : served.baseUrl);
      } finally {
        await served.stop();
      }
    }
  });

  test('a forwarded host that is not a plain host and port gives relative links rather than a made-up address', async () => {
    const f = await alertFixture({ alerts: { allowPrivate: true }, trustedProxies: ['127.0.0.1'] });
    const served = f.t.serve();
    try {
      for (const forged of ['evil.example/phish?x=', 'user:pass@evil.example']) {
        const response = await fetch(`${served.baseUrl}/api/alert-channels`, {
          method: 'POST',
          headers: { cookie: f.cookie, 'content-type': 'application/json', 'x-forwarded-host': forged },
          body: JSON.stringify({ connectionId: f.connection.id, name: forged, url: 'http://hooks.example.com/x', format: 'json' }),
        });
        const { channel } = (await response.json()) as { channel: { linkBase: string | null } };
        expect({ forged, linkBase: channel.linkBase }).toEqual({ forged, linkBase: null });
      }
    } finally {
      await served.stop();
    }
  });

  test('the address is in the channel record: a replay and a snapshot restore keep it', async () => {
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    await f.t.request('POST', '/api/alert-channels', {
      body: { connectionId: f.connection.id, name: 'ops', url: 'http://hooks.example.com/x', format: 'json' },
      headers: { cookie: f.cookie, host: 'jobs.example.test' },
    });
    for (const engine of [f.replayed(), f.restored()]) {
      expect([...engine.connection(f.connection.id)!.alerts.channels.values()].map((channel) => channel.dashboardUrl)).toEqual(['http://jobs.example.test']);
    }
  });

  test('a snapshot written before channels kept the address restores them with relative links', async () => {
    const f = await alertFixture({ alerts: { allowPrivate: true } });
    await f.t.request('POST', '/api/alert-channels', {
      body: { connectionId: f.connection.id, name: 'ops', url: 'http://hooks.example.com/x', format: 'json' },
      headers: { cookie: f.cookie, host: 'jobs.example.test' },
    });
    const engine = f.restored((chunk) => {
      if (chunk.k === 'connection') for (const channel of chunk.alerts?.channels ?? []) delete channel.dashboardUrl;
      return chunk;
    });
    const [channel] = [...engine.connection(f.connection.id)!.alerts.channels.values()];
    expect(channel!.dashboardUrl).toBeUndefined();
    expect(linkBaseOf(channel!, null)).toBeNull();
  });

  test('a channel created before the address was kept links relatively, unless PUBLIC_URL is set', () => {
    expect(linkBaseOf({}, null)).toBeNull();
    expect(linkBaseOf({}, 'https://jobwatch.example.com')).toBe('https://jobwatch.example.com');
    expect(linkBaseOf({ dashboardUrl: 'http://jobs.example.test' }, null)).toBe('http://jobs.example.test');
  });
});
