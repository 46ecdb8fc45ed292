/**
 * The webhook guard over every spelling of an address a URL can carry: each IPv6 form
 * that embeds an IPv4 address is judged as that address, the clouds' metadata and
 * credential endpoints are refused even with private addresses allowed, and the ranges
 * refused by default. One row per form: what the guard says by default and with
 * ALERT_WEBHOOK_ALLOW_PRIVATE=true.
 */
import { describe, expect, test } from 'bun:test';
import { classifyAddress, METADATA_ENDPOINTS } from '../../src/alerts/address-ranges.ts';
import { embeddedIpv4, ipv6Hextets } from '../../src/alerts/embedded-ipv4.ts';
import { checkWebhookTarget, WebhookRefusal, type Resolver } from '../../src/alerts/webhook-guard.ts';
import { PUBLIC_RESOLVER } from './alert-fixture.ts';

/** 'ok': accepted; 'always': a metadata endpoint, refused in both modes; otherwise the refused range, accepted with private addresses allowed. */
type Expected = 'ok' | 'always' | string;

const ALWAYS_MESSAGE = /is a cloud metadata endpoint \(.+\): always refused$/;

async function verdict(url: string, allowPrivate: boolean, resolve: Resolver = PUBLIC_RESOLVER): Promise<string> {
  try {
    await checkWebhookTarget(url, { allowPrivate, resolve });
    return 'ok';
  } catch (error) {
    if (!(error instanceof WebhookRefusal)) throw error;
    return error.message;
  }
}

async function expectRow(url: string, expected: Expected, resolve?: Resolver): Promise<void> {
  const byDefault = await verdict(url, false, resolve);
  const allowingPrivate = await verdict(url, true, resolve);
  if (expected === 'ok') {
    expect(byDefault).toBe('ok');
    expect(allowingPrivate).toBe('ok');
  } else if (expected === 'always') {
    expect(byDefault).toMatch(ALWAYS_MESSAGE);
    expect(allowingPrivate).toMatch(ALWAYS_MESSAGE);
  } else {
    expect(byDefault).toContain(`is a ${expected} address: refused`);
    expect(allowingPrivate).toBe('ok');
  }
}

describe('IPv6 forms carrying an IPv4 address are judged as that address', () => {
  const rows: Array<[url: string, expected: Expected, carries: string]> = [
    // the forms the probe found accepted
    ['http://[::ffff:169.254.169.254]/', 'always', '169.254.169.254 (IPv4-mapped)'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'always', '169.254.169.254 (NAT64)'],
    ['http://[64:ff9b::7f00:1]/', 'loopback', '127.0.0.1 (NAT64)'],
    ['http://[2002:7f00:1::1]/', 'loopback', '127.0.0.1 (6to4)'],
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'loopback', '127.0.0.1 (Teredo)'],
    ['http://[::ffff:0:7f00:1]/', 'loopback', '127.0.0.1 (IPv4-translated)'],
    // IPv4-mapped, every spelling
    ['http://[::ffff:127.0.0.1]/', 'loopback', '127.0.0.1 (IPv4-mapped)'],
    ['http://[::ffff:7f00:1]/', 'loopback', '127.0.0.1 (IPv4-mapped)'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'always', '169.254.169.254 (IPv4-mapped)'],
    ['http://[::FFFF:A9FE:A9FE]/', 'always', '169.254.169.254 (IPv4-mapped)'],
    ['http://[::ffff:10.1.2.3]/', 'private', '10.1.2.3 (IPv4-mapped)'],
    ['http://[::ffff:100.100.100.200]/', 'always', '100.100.100.200 (IPv4-mapped)'],
    ['http://[::ffff:169.254.170.2]/', 'always', '169.254.170.2 (IPv4-mapped)'],
    ['http://[::ffff:8.8.8.8]/', 'ok', '8.8.8.8 (IPv4-mapped)'],
    // IPv4-translated
    ['http://[::ffff:0:a9fe:a9fe]/', 'always', '169.254.169.254 (IPv4-translated)'],
    ['http://[::ffff:0:192.168.1.1]/', 'private', '192.168.1.1 (IPv4-translated)'],
    // IPv4-compatible (deprecated)
    ['http://[::127.0.0.1]/', 'loopback', '127.0.0.1 (IPv4-compatible)'],
    ['http://[::a9fe:a9fe]/', 'always', '169.254.169.254 (IPv4-compatible)'],
    ['http://[::10.0.0.1]/', 'private', '10.0.0.1 (IPv4-compatible)'],
    // NAT64, the well-known prefix
    ['http://[64:ff9b::169.254.170.2]/', 'always', '169.254.170.2 (NAT64)'],
    ['http://[64:ff9b::a00:1]/', 'private', '10.0.0.1 (NAT64)'],
    ['http://[64:ff9b::6464:64c8]/', 'always', '100.100.100.200 (NAT64)'],
    ['http://[64:ff9b::808:808]/', 'ok', '8.8.8.8 (NAT64)'],
    // NAT64 local-use: refused by default whatever it carries; a metadata endpoint at any RFC 6052 offset always
    ['http://[64:ff9b:1::a9fe:a9fe]/', 'always', '169.254.169.254 (NAT64 local-use)'],
    ['http://[64:ff9b:1:0:a9:fea9:fe00:0]/', 'always', '169.254.169.254 (NAT64 local-use)'],
    ['http://[64:ff9b:1:a9fe:a9:fe00::]/', 'always', '169.254.169.254 (NAT64 local-use)'],
    ['http://[64:ff9b:1::7f00:1]/', 'loopback', '127.0.0.1 (NAT64 local-use)'],
    ['http://[64:ff9b:1::808:808]/', 'NAT64 local-use', '8.8.8.8 (NAT64 local-use)'],
    // 6to4
    ['http://[2002:a9fe:a9fe::1]/', 'always', '169.254.169.254 (6to4)'],
    ['http://[2002:c0a8:101::]/', 'private', '192.168.1.1 (6to4)'],
    ['http://[2002:808:808::1]/', 'ok', '8.8.8.8 (6to4)'],
    // Teredo: the client's address is the last 32 bits inverted
    ['http://[2001::5601:5601]/', 'always', '169.254.169.254 (Teredo)'],
    ['http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', 'private', '10.0.0.1 (Teredo)'],
    ['http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/', 'ok', '8.8.8.8 (Teredo)'],
    // ISATAP: the interface id 0:5efe or 200:5efe
    ['http://[2600:1f18::5efe:a9fe:a9fe]/', 'always', '169.254.169.254 (ISATAP)'],
    ['http://[2600:1f18::200:5efe:a00:1]/', 'private', '10.0.0.1 (ISATAP)'],
    ['http://[fd00::5efe:a9fe:a9fe]/', 'always', '169.254.169.254 (ISATAP)'],
    ['http://[2600:1f18::5efe:808:808]/', 'ok', '8.8.8.8 (ISATAP)'],
  ];
  for (const [url, expected, carries] of rows) {
    test(`${url}: ${expected === 'ok' ? 'accepted' : expected === 'always' ? 'always refused' : `${expected}, refused by default`} (carries ${carries})`, async () => {
      await expectRow(url, expected);
      const message = await verdict(url, false);
      if (expected !== 'ok') expect(message).toContain(`carries ${carries}`);
    });
  }

  test('a name resolving to an IPv6 form is judged as the IPv4 address it carries', async () => {
    const resolving = (address: string): Resolver => async () => [{ address, family: 6 }];
    await expectRow('https://metadata.example.com/', 'always', resolving('::ffff:169.254.169.254'));
    await expectRow('https://nat64.example.com/', 'loopback', resolving('64:ff9b::7f00:1'));
    await expectRow('https://public.example.com/', 'ok', resolving('64:ff9b::808:808'));
    expect(await verdict('https://nat64.example.com/', false, resolving('64:ff9b::7f00:1'))).toBe(
      'nat64.example.com resolves to 64:ff9b::7f00:1, which carries 127.0.0.1 (NAT64), which is a loopback address: refused (ALERT_WEBHOOK_ALLOW_PRIVATE=true allows private addresses for an intranet)',
    );
  });
});

describe('the clouds\' metadata and credential endpoints are always refused', () => {
  for (const { address, whose } of METADATA_ENDPOINTS) {
    test(`${address} (${whose})`, async () => {
      const url = address.includes(':') ? `http://[${address}]/` : `http://${address}/`;
      await expectRow(url, 'always');
      expect(await verdict(url, true)).toContain(`(${whose})`);
      await expectRow('https://internal.example.com/', 'always', async () => [{ address, family: address.includes(':') ? 6 : 4 }]);
    });
  }

  test('IPv4 spellings the URL parser turns into the metadata address', async () => {
    for (const url of ['http://2852039166/', 'http://0xa9fea9fe/', 'http://0251.0376.0251.0376/', 'http://169.254.43518/', 'http://169.16689662/']) {
      await expectRow(url, 'always');
    }
    await expectRow('http://[fd00:ec2:0:0:0:0:0:254]/', 'always');
    await expectRow('http://[FD00:EC2::254]/', 'always');
  });

  test('an address beside an endpoint is judged by its range only', async () => {
    await expectRow('http://169.254.169.253/', 'link-local');
    await expectRow('http://100.100.100.201/', 'CGNAT (shared address space)');
    await expectRow('http://[fd00:ec2::253]/', 'private');
    await expectRow('http://168.63.129.17/', 'ok');
  });
});

describe('ranges refused by default', () => {
  const rows: Array<[url: string, expected: Expected]> = [
    ['http://[fec0::1]/', 'site-local (deprecated)'],
    ['http://[feff:ffff::1]/', 'site-local (deprecated)'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fe80::5efe:808:808]/', 'link-local'],
    ['http://[fc00::1]/', 'private'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://[::]/', 'unspecified'],
    ['http://[::1]/', 'loopback'],
    ['http://[100::1]/', 'reserved'],
    ['http://[2001:db8::1]/', 'reserved'],
    ['http://192.0.2.10/', 'reserved'],
    ['http://198.51.100.7/', 'reserved'],
    ['http://203.0.113.9/', 'reserved'],
    ['http://192.88.99.1/', 'reserved'],
    ['http://255.255.255.255/', 'reserved'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://127.1/', 'loopback'],
    ['http://[2606:4700:4700::1111]/', 'ok'],
    ['http://[fbff:ffff::1]/', 'ok'],
    ['http://[2003::1]/', 'ok'],
    ['http://[2001:1::1]/', 'ok'],
    ['http://1.1.1.1/', 'ok'],
  ];
  for (const [url, expected] of rows) {
    test(`${url}: ${expected}`, () => expectRow(url, expected));
  }
});

describe('embeddedIpv4', () => {
  test('::, ::1 and ordinary addresses carry nothing', () => {
    for (const address of ['::', '::1', '2606:4700:4700::1111', 'fe80::1', '2001:db8::1', '64:ff9b:2::1']) {
      expect(embeddedIpv4(ipv6Hextets(address))).toBeNull();
    }
  });

  test('a local-use NAT64 address names the candidates at RFC 6052\'s other offsets', () => {
    const embedded = embeddedIpv4(ipv6Hextets('64:ff9b:1:a9fe:a9:fe00::'))!;
    expect(embedded.form).toBe('NAT64 local-use');
    expect(embedded.text).toBe('0.0.0.0');
    expect(classifyAddress('64:ff9b:1:a9fe:a9:fe00::').range).toBe('cloud metadata');
  });

  test('not an address at all is reserved', () => {
    expect(classifyAddress('example.com')).toEqual({ range: 'reserved', endpoint: null, embedded: null });
  });
});
