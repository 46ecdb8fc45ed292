import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('live stream settings from the environment', () => {
  test('embedded defaults: a minute of resume grace, a 16 MiB resume buffer per connection', () => {
    expect(loadConfig({})).toMatchObject({ streamResumeGraceMs: 60_000, streamResumeBufferBytesMax: 16 * 1024 * 1024 });
  });

  test('values are read in their unit and converted', () => {
    expect(loadConfig({ STREAM_RESUME_GRACE_SECONDS: '0' }).streamResumeGraceMs).toBe(0);
    expect(loadConfig({ STREAM_RESUME_GRACE_SECONDS: '300' }).streamResumeGraceMs).toBe(300_000);
    expect(loadConfig({ STREAM_RESUME_BUFFER_MB: '2' }).streamResumeBufferBytesMax).toBe(2 * 1024 * 1024);
  });

  for (const [name, value] of [
    ['STREAM_RESUME_GRACE_SECONDS', '-1'],
    ['STREAM_RESUME_GRACE_SECONDS', '3601'],
    ['STREAM_RESUME_GRACE_SECONDS', 'a minute'],
    ['STREAM_RESUME_BUFFER_MB', '0'],
    ['STREAM_RESUME_BUFFER_MB', '1025'],
  ] as const) {
    test(`${name}=${value} stops start-up with a message naming it`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(name);
    });
  }
});
