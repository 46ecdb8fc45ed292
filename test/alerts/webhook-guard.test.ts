/**
 * The outbound guard: each refused range, each refused scheme, names that resolve into a
 * refused range (at creation and again at send time), and the send going to the address
 * that was checked rather than to a second lookup.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { refusedRangeOf } from '../../src/alerts/address-ranges.ts';
import { checkWebhookTarget, WebhookRefusal, type Resolver } from '../../src/alerts/webhook-guard.ts';
import { sendWebhook } from '../../src/alerts/webhook-sender.ts';
import { alertFixture, PUBLIC_RESOLVER } from './alert-fixture.ts';
import { webhookReceiver } from './webhook-receiver.ts';

const resolvingTo = (...addresses: string[]): Resolver => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const refuse = (url: string, resolve: Resolver = PUBLIC_RESOLVER, allowPrivate = false) => checkWebhookTarget(url, { allowPrivate, resolve });

async function refusal(promise: Promise<unknown>): Promise<WebhookRefusal> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebhookRefusal) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe('address ranges', () => {
  const cases: Array<[string, string | null]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.10.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.10.20', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'CGNAT (shared address space)'],
    ['100.127.255.254', 'CGNAT (shared address space)'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    // an IPv6 form carrying an IPv4 address is judged as that address (address-forms.test.ts has every form)
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:8.8.8.8', null],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    // public neighbours of the ranges
    ['172.32.0.1', null],
    ['100.128.0.1', null],
    ['11.0.0.1', null],
    ['8.8.8.8', null],
    ['2606:4700:4700::1111', null],
    ['fec0::1', 'site-local (deprecated)'],
  ];
  for (const [address, range] of cases) {
    test(`${address}: ${range ?? 'public'}`, () => expect(refusedRangeOf(address)).toBe(range as never));
  }
});

describe('checkWebhookTarget', () => {
  test('only http and https', async () => {
    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'gopher://example.com', 'javascript:alert(1)', 'ws://example.com']) {
      expect((await refusal(refuse(url))).message).toMatch(/^only http and https URLs are allowed, not /);
    }
    expect((await refusal(refuse('not a url'))).message).toBe('not a valid absolute URL');
    expect((await refuse('https://hooks.example.com/x')).address).toBe('93.184.216.34');
  });

  test('a URL with credentials is refused', async () => {
    expect((await refusal(refuse('https://user:pass@hooks.example.com/x'))).message).toContain('user name or password');
  });

  test('each refused range, as a literal and as a name that resolves to it, with a message naming it', async () => {
    const literals: Array<[string, string]> = [
      ['http://127.0.0.1:8080/x', 'loopback'],
      ['http://[::1]/x', 'loopback'],
      ['http://10.1.2.3/x', 'private'],
      ['http://192.168.0.10/x', 'private'],
      ['http://[fd00::5]/x', 'private'],
      ['http://169.254.1.1/x', 'link-local'],
      ['http://[fe80::1]/x', 'link-local'],
      ['http://100.100.100.100/x', 'CGNAT'],
      ['http://[::ffff:10.0.0.1]/x', 'carries 10.0.0.1 (IPv4-mapped), which is a private address'],
      ['http://0.0.0.0/x', 'unspecified'],
    ];
    for (const [url, range] of literals) {
      const error = await refusal(refuse(url));
      expect(error.message).toContain(range);
      expect(error.message).toContain('ALERT_WEBHOOK_ALLOW_PRIVATE=true');
      expect(error.retryable).toBe(false);
    }
    const named = await refusal(refuse('https://intranet.example.com/hook', resolvingTo('10.20.30.40')));
    expect(named.message).toBe('intranet.example.com resolves to 10.20.30.40, which is a private address: refused (ALERT_WEBHOOK_ALLOW_PRIVATE=true allows private addresses for an intranet)');
  });

  test('a name with one public and one private address is refused', async () => {
    expect((await refusal(refuse('https://mixed.example.com/', resolvingTo('93.184.216.34', '127.0.0.1')))).message).toContain('loopback');
  });

  test('ALERT_WEBHOOK_ALLOW_PRIVATE=true allows private and loopback addresses, never the metadata service', async () => {
    expect((await refuse('http://127.0.0.1:9000/x', PUBLIC_RESOLVER, true)).address).toBe('127.0.0.1');
    expect((await refuse('http://intranet/x', resolvingTo('10.0.0.7'), true)).address).toBe('10.0.0.7');
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      expect((await refusal(refuse(url, PUBLIC_RESOLVER, true))).message).toMatch(/is a cloud metadata endpoint \(.+\): always refused$/);
    }
    expect((await refusal(refuse('http://metadata.internal/', resolvingTo('169.254.169.254'), true))).message).toContain('cloud metadata');
  });

  test('a name that does not resolve is a retryable refusal', async () => {
    const error = await refusal(refuse('https://nowhere.example.com/', async () => Promise.reject(Object.assign(new Error('no'), { code: 'ENOTFOUND' }))));
    expect(error.message).toBe('could not resolve nowhere.example.com (ENOTFOUND)');
    expect(error.retryable).toBe(true);
  });
});

describe('the guard in the routes and at send time', () => {
  test('creating a channel with a refused URL is a 400 naming url and the reason', async () => {
    const f = await alertFixture();
    for (const [url, reason] of [
      ['http://127.0.0.1/hook', 'loopback'],
      ['http://169.254.169.254/latest', 'cloud metadata'],
      ['ftp://hooks.example.com/', 'only http and https'],
    ] as const) {
      const answer = await f.t.request('POST', '/api/alert-channels', { body: { connectionId: f.connection.id, name: 'x', url, format: 'json' }, headers: { cookie: f.cookie } });
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe('VALIDATION_ERROR');
      expect(answer.json.error.details.url[0]).toContain(reason);
    }
    expect(f.book().channels.size).toBe(0);
  });

  test('a name that resolved to a public address at creation and to loopback at send time is refused then, and nothing is sent', async () => {
    const hooks = webhookReceiver();
    stops.push(hooks.stop);
    let answer = '93.184.216.34';
    const f = await alertFixture({ alerts: { resolve: async () => [{ address: answer, family: 4 }] } });
    const { channel } = await f.createChannel({ url: `http://rebind.example.com:${hooks.port}/hook` });
    answer = '127.0.0.1';
    const tested = await f.t.request('POST', `/api/alert-channels/${channel.id}/test`, { headers: { cookie: f.cookie, 'content-type': 'application/json' }, rawBody: '{}' });
    expect(tested.json.attempt).toMatchObject({ outcome: 'failed', httpStatus: null });
    expect(tested.json.attempt.error).toBe('refused: rebind.example.com resolves to 127.0.0.1, which is a loopback address: refused (ALERT_WEBHOOK_ALLOW_PRIVATE=true allows private addresses for an intranet)');
    expect(hooks.received).toHaveLength(0);
  });

  test('the request goes to the address the guard checked (no second lookup), under the URL\'s own host name', async () => {
    const hooks = webhookReceiver();
    stops.push(hooks.stop);
    const result = await sendWebhook(`http://pinned.invalid:${hooks.port}/hook`, '{}', {}, {
      allowPrivate: true,
      resolve: resolvingTo('127.0.0.1'),
      timeoutMs: 5_000,
      responseBytesMax: 4_096,
    });
    expect(result).toEqual({ ok: true, httpStatus: 204, error: null, retryable: false });
    expect(hooks.received[0]!.headers.get('host')).toBe(`pinned.invalid:${hooks.port}`);
  });

  test('a receiver that does not answer in time is a retryable failure; a long answer is not read whole', async () => {
    const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Promise<Response>(() => {}) });
    stops.push(() => silent.stop(true));
    const options = { allowPrivate: true, resolve: PUBLIC_RESOLVER, timeoutMs: 300, responseBytesMax: 4_096 };
    expect(await sendWebhook(`http://127.0.0.1:${silent.port}/`, '{}', {}, options)).toEqual({ ok: false, httpStatus: null, error: 'no answer within 0.3 s', retryable: true });

    const huge = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('x'.repeat(8 * 1024 * 1024), { status: 500 }) });
    stops.push(() => huge.stop(true));
    const result = await sendWebhook(`http://127.0.0.1:${huge.port}/`, '{}', {}, { ...options, timeoutMs: 5_000 });
    expect(result.httpStatus).toBe(500);
    expect(result.error).toBe(`HTTP 500: ${'x'.repeat(200)}`);
  });
});
