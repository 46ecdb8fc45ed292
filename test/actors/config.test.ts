import { describe, expect, test } from 'bun:test';
import { CLUSTER_STANDBYS_DEFAULT, ConfigError, loadConfig } from '../../src/config.ts';

describe('configuration from the environment', () => {
  test('embedded defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      dataDir: './data',
      dailyEventLimit: 10_000,
      retentionMs: 24 * 3_600_000,
      fsync: 'always',
      cookieSecure: 'auto',
      adminEmail: null,
      adminPassword: null,
      sessionSecret: null,
      streamsPerUserMax: 20,
      tenantLimits: {
        queuesPerConnectionMax: 1_000,
        workersPerConnectionMax: 1_000,
        connectionMemoryBytesMax: 1024 * 1024 * 1024,
        dailyIngestBytesMax: 256 * 1024 * 1024,
        clockSkewToleranceMs: 300_000,
      },
    });
  });

  test('tenant limits are read from their variables', () => {
    const config = loadConfig({ QUEUES_PER_CONNECTION_MAX: '10', WORKERS_PER_CONNECTION_MAX: '20', CONNECTION_MEMORY_MB: '0', DAILY_INGEST_MB: '5', CLOCK_SKEW_TOLERANCE_SECONDS: '0' });
    expect(config.tenantLimits).toEqual({ queuesPerConnectionMax: 10, workersPerConnectionMax: 20, connectionMemoryBytesMax: 0, dailyIngestBytesMax: 5 * 1024 * 1024, clockSkewToleranceMs: 0 });
  });

  test('WORKERS: shards from 1 to 64', () => {
    expect(loadConfig({ WORKERS: '1' }).workers).toBe(1);
    expect(loadConfig({ WORKERS: '64' }).workers).toBe(64);
  });

  test('values are read and converted', () => {
    const config = loadConfig({ PORT: '8080', DAILY_EVENT_LIMIT: '0', RETENTION_HOURS: '48', FSYNC: 'everysec', COOKIE_SECURE: 'true', MAX_JOBS_PER_CONNECTION: '5000' });
    expect(config).toMatchObject({ port: 8080, dailyEventLimit: 0, retentionMs: 48 * 3_600_000, fsync: 'everysec', cookieSecure: 'true', maxJobsPerConnection: 5000 });
  });

  test('CLUSTER_NATS_URL: a comma-separated server list switches on cluster mode; anything else is refused by name', () => {
    expect(loadConfig({}).clusterNatsUrl).toBeNull();
    const secret = 'sixteen-chars-ok';
    const config = loadConfig({
      CLUSTER_NATS_URL: 'nats://10.0.0.1:4222, nats://10.0.0.2:4222,',
      CLUSTER_NODE_ID: 'node-a',
      CLUSTER_REPLICAS: '1',
      CLUSTER_LEASE_MS: '2000',
      CLUSTER_SECRET: secret,
      CLUSTER_ADVERTISE_URL: 'http://10.0.0.5:3000/',
    });
    expect(config).toMatchObject({
      clusterNatsUrl: ['nats://10.0.0.1:4222', 'nats://10.0.0.2:4222'],
      clusterNodeId: 'node-a',
      clusterReplicas: 1,
      clusterLeaseMs: 2000,
      clusterSecret: secret,
      clusterAdvertiseUrl: 'http://10.0.0.5:3000',
    });
    for (const bad of ['http://10.0.0.1:4222', 'nats://a:1/path', ' , ']) {
      expect(() => loadConfig({ CLUSTER_NATS_URL: bad, CLUSTER_SECRET: secret })).toThrow(/^CLUSTER_NATS_URL /);
    }
    // forwards between nodes are signed with it: cluster mode does not start without one
    expect(() => loadConfig({ CLUSTER_NATS_URL: 'nats://10.0.0.1:4222' })).toThrow(/needs CLUSTER_SECRET/);
    expect(() => loadConfig({ CLUSTER_NATS_URL: 'nats://10.0.0.1:4222', CLUSTER_SECRET: 'fifteen-chars!!' })).toThrow(/at least 16 characters/);
    expect(() => loadConfig({ CLUSTER_ADVERTISE_URL: 'node-a:3000' })).toThrow(/^CLUSTER_ADVERTISE_URL /);
    expect(() => loadConfig({ CLUSTER_REPLICAS: '7' })).toThrow(/CLUSTER_REPLICAS must be between 1 and 5/);
  });

  test('CLUSTER_STANDBYS: a count from 0 to 8 or `all`, the default when unset; anything else refused by name', () => {
    expect(loadConfig({}).clusterStandbys).toBe(CLUSTER_STANDBYS_DEFAULT);
    expect(loadConfig({ CLUSTER_STANDBYS: '0' }).clusterStandbys).toBe(0);
    expect(loadConfig({ CLUSTER_STANDBYS: '8' }).clusterStandbys).toBe(8);
    expect(loadConfig({ CLUSTER_STANDBYS: ' ALL ' }).clusterStandbys).toBe('all');
    expect(() => loadConfig({ CLUSTER_STANDBYS: '9' })).toThrow(/CLUSTER_STANDBYS must be between 0 and 8, got 9/);
    for (const bad of ['-1', 'some', '1.5']) expect(() => loadConfig({ CLUSTER_STANDBYS: bad })).toThrow(/^CLUSTER_STANDBYS must be a whole number from 0 to 8 or 'all'/);
  });

  test('CLUSTER_REBALANCE_SECONDS: 15 s by default, 0 turns placement by size off, at most an hour', () => {
    expect(loadConfig({}).clusterRebalanceMs).toBe(15_000);
    expect(loadConfig({ CLUSTER_REBALANCE_SECONDS: '0' }).clusterRebalanceMs).toBe(0);
    expect(loadConfig({ CLUSTER_REBALANCE_SECONDS: '2' }).clusterRebalanceMs).toBe(2_000);
    for (const bad of ['-1', '3601', 'soon']) expect(() => loadConfig({ CLUSTER_REBALANCE_SECONDS: bad })).toThrow(/CLUSTER_REBALANCE_SECONDS/);
  });

  test('MEMORY_RETURN_IDLE_MS: 5 s by default, off by default on a cluster node (a stop could outlast its lease), as set when set', () => {
    const cluster = { CLUSTER_NATS_URL: 'nats://127.0.0.1:4222', CLUSTER_SECRET: 'a-cluster-secret-of-some-length' };
    expect(loadConfig({}).memoryReturnIdleMs).toBe(5_000);
    expect(loadConfig(cluster).memoryReturnIdleMs).toBe(0);
    expect(loadConfig({ ...cluster, MEMORY_RETURN_IDLE_MS: '2000' }).memoryReturnIdleMs).toBe(2_000);
    expect(loadConfig({ MEMORY_RETURN_IDLE_MS: '0' }).memoryReturnIdleMs).toBe(0);
  });

  test('TRUSTED_PROXIES: none by default; addresses and CIDRs of both families', () => {
    expect(loadConfig({}).trustedProxies.includes('127.0.0.1')).toBe(false);
    const proxies = loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8 , ::1,192.168.1.5' }).trustedProxies;
    expect(['10.9.8.7', '::1', '192.168.1.5', '::ffff:10.0.0.1'].map((address) => proxies.includes(address))).toEqual([true, true, true, true]);
    expect(['11.0.0.1', '192.168.1.6', '::2', 'unknown'].map((address) => proxies.includes(address))).toEqual([false, false, false, false]);
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DAILY_EVENT_LIMIT: '-1' }, 'DAILY_EVENT_LIMIT'],
    [{ RETENTION_HOURS: '0' }, 'RETENTION_HOURS'],
    [{ FSYNC: 'sometimes' }, 'FSYNC'],
    [{ COOKIE_SECURE: 'yes' }, 'COOKIE_SECURE'],
    [{ MAX_JOBS_PER_CONNECTION: '1.5' }, 'MAX_JOBS_PER_CONNECTION'],
    [{ ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD'],
    [{ ADMIN_EMAIL: 'not-an-email' }, 'ADMIN_EMAIL'],
    [{ SESSION_SECRET: 'tiny' }, 'SESSION_SECRET'],
    [{ STREAMS_PER_USER_MAX: '0' }, 'STREAMS_PER_USER_MAX'],
    [{ QUEUES_PER_CONNECTION_MAX: '0' }, 'QUEUES_PER_CONNECTION_MAX'],
    [{ WORKERS_PER_CONNECTION_MAX: 'many' }, 'WORKERS_PER_CONNECTION_MAX'],
    [{ CONNECTION_MEMORY_MB: '-5' }, 'CONNECTION_MEMORY_MB'],
    [{ DAILY_INGEST_MB: '1.5' }, 'DAILY_INGEST_MB'],
    [{ CLOCK_SKEW_TOLERANCE_SECONDS: '999999999' }, 'CLOCK_SKEW_TOLERANCE_SECONDS'],
    [{ TRUSTED_PROXIES: '10.0.0.1, proxy.internal' }, 'TRUSTED_PROXIES'],
    [{ TRUSTED_PROXIES: '10.0.0.0/40' }, 'TRUSTED_PROXIES'],
    [{ WORKERS: '0' }, 'WORKERS'],
    [{ WORKERS: '65' }, 'WORKERS'],
    [{ WORKERS: 'all' }, 'WORKERS'],
  ];
  for (const [env, name] of bad) {
    test(`a bad ${name} stops start-up with a message naming it`, () => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(name);
    });
  }
});
