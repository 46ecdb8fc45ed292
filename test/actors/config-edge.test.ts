import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('configuration of the HTTP edge', () => {
  test('defaults: relative docs_url, 30 s for a request body', () => {
    expect(loadConfig({})).toMatchObject({ publicUrl: null, bodyTimeoutMs: 30_000 });
  });

  test('PUBLIC_URL is kept without its trailing slash; BODY_TIMEOUT_SECONDS in seconds', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://jobs.example.com/', BODY_TIMEOUT_SECONDS: '5' })).toMatchObject({
      publicUrl: 'https://jobs.example.com',
      bodyTimeoutMs: 5_000,
    });
    expect(loadConfig({ PUBLIC_URL: 'http://10.0.0.5:8080/jobwatch/' }).publicUrl).toBe('http://10.0.0.5:8080/jobwatch');
  });

  test('in flight per connection: 32 requests and 64 MB by default; IN_FLIGHT_MB_PER_CONNECTION in MiB', () => {
    expect(loadConfig({}).inFlightPerConnection).toEqual({ requestsMax: 32, bytesMax: 64 * 1024 * 1024 });
    expect(loadConfig({ IN_FLIGHT_REQUESTS_PER_CONNECTION: '4', IN_FLIGHT_MB_PER_CONNECTION: '6' }).inFlightPerConnection).toEqual({ requestsMax: 4, bytesMax: 6 * 1024 * 1024 });
  });

  for (const [name, value] of [
    ['IN_FLIGHT_REQUESTS_PER_CONNECTION', '0'],
    // below one body of the largest size (5 MiB), no ingest of that size could ever be admitted
    ['IN_FLIGHT_MB_PER_CONNECTION', '5'],
    ['IN_FLIGHT_MB_PER_CONNECTION', 'lots'],
    ['PUBLIC_URL', 'jobs.example.com'],
    ['PUBLIC_URL', 'ftp://jobs.example.com'],
    ['PUBLIC_URL', 'https://jobs.example.com/?a=1'],
    ['PUBLIC_URL', 'https://user:pw@jobs.example.com'],
    ['BODY_TIMEOUT_SECONDS', '0'],
    ['BODY_TIMEOUT_SECONDS', '1.5'],
  ] as const) {
    test(`${name}=${value} stops start-up with a message naming it`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(name);
    });
  }
});

describe('configuration of what jobs were called with', () => {
  test('caps in KiB and lines; REDACT_KEYS comma-separated, none for none', () => {
    expect(loadConfig({ JOB_ARGS_KB: '8', JOB_RESULT_KB: '2', JOB_LOG_KB: '512', JOB_LOG_LINES: '50', REDACT_KEYS: ' iban , tax-id ' }).payloadLimits).toEqual({
      argsBytesMax: 8 * 1024,
      resultBytesMax: 2 * 1024,
      logBytesMax: 512 * 1024,
      logLinesMax: 50,
      redactKeys: ['iban', 'tax-id'],
    });
    expect(loadConfig({ REDACT_KEYS: 'NONE' }).payloadLimits.redactKeys).toEqual([]);
  });

  for (const [name, value] of [
    ['JOB_ARGS_KB', '0'],
    ['JOB_ARGS_KB', '2048'],
    ['JOB_LOG_LINES', '70000'],
    ['REDACT_KEYS', 'pass word'],
    ['REDACT_KEYS', ',,'],
  ] as const) {
    test(`${name}=${value} stops start-up with a message naming it`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(name);
    });
  }
});

describe('configuration of task metrics', () => {
  test('tiers in hours and days, and the series cap, are read; a coarser tier keeping less than a finer one stops start-up', () => {
    const config = loadConfig({ METRICS_MINUTE_RETENTION_HOURS: '12', METRICS_HOUR_RETENTION_DAYS: '30', METRICS_DAY_RETENTION_DAYS: '400', METRICS_SERIES_MAX: '50' });
    expect(config.taskMetrics).toEqual({ retentionMs: { minute: 12 * 3_600_000, hour: 30 * 86_400_000, day: 400 * 86_400_000 }, seriesMax: 50 });
    expect(() => loadConfig({ METRICS_MINUTE_RETENTION_HOURS: '72', METRICS_HOUR_RETENTION_DAYS: '2' })).toThrow(/coarser/);
    expect(() => loadConfig({ METRICS_HOUR_RETENTION_DAYS: '800' })).toThrow(/coarser/);
    expect(() => loadConfig({ METRICS_SERIES_MAX: '0' })).toThrow('METRICS_SERIES_MAX');
  });
});
