/**
 * A real 3-server NATS cluster for tests: Debian's `nats-server` with JetStream on, each
 * server in its own temporary directory, client and route ports on loopback picked free,
 * max_payload raised as cluster mode requires. Servers can be killed (SIGKILL) one by one;
 * `stop()` ends all of them and removes their directories.
 */
import type { Subprocess } from 'bun';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

export const NATS_SERVER_BINARY = process.env.NATS_SERVER_BINARY ?? 'nats-server';

export interface NatsServerProcess {
  name: string;
  url: string;
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  output: string;
}

export interface NatsTestCluster {
  servers: NatsServerProcess[];
  /** CLUSTER_NATS_URL for all servers. */
  url: string;
  kill(index: number): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Attempts at starting a cluster: a port picked free may be taken by another process before its server binds it. */
const START_ATTEMPTS = 3;

export async function startNatsCluster(size = 3): Promise<NatsTestCluster> {
  if (Bun.which(NATS_SERVER_BINARY) === null) {
    throw new Error(`${NATS_SERVER_BINARY} not found: install Debian's nats-server package (bash .ci/install-system-packages does)`);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsClusterOnce(size);
    } catch (error) {
      if (attempt >= START_ATTEMPTS) throw error;
    }
  }
}

async function startNatsClusterOnce(size: number): Promise<NatsTestCluster> {
  const root = mkdtempSync(join(tmpdir(), 'jobwatch-nats-'));
  const clientPorts: number[] = [];
  const routePorts: number[] = [];
  for (let index = 0; index < size; index++) {
    clientPorts.push(await freePort());
    routePorts.push(await freePort());
  }
  const servers: NatsServerProcess[] = [];
  for (let index = 0; index < size; index++) {
    const name = `n${index + 1}`;
    const dir = join(root, name);
    const routes = routePorts.filter((_, other) => other !== index).map((port) => `"nats-route://127.0.0.1:${port}"`);
    const configPath = join(root, `${name}.conf`);
    writeFileSync(
      configPath,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${clientPorts[index]}`,
        'max_payload: 8MB',
        `jetstream { store_dir: "${dir}" }`,
        `cluster { name: jobwatch-test, listen: 127.0.0.1:${routePorts[index]}, routes: [${routes.join(', ')}] }`,
        '',
      ].join('\n'),
    );
    const proc = Bun.spawn([NATS_SERVER_BINARY, '-c', configPath], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
    const server: NatsServerProcess = { name, url: `nats://127.0.0.1:${clientPorts[index]}`, proc, output: '' };
    void pump(proc.stderr, (text) => (server.output += text));
    void pump(proc.stdout, (text) => (server.output += text));
    servers.push(server);
  }
  const cluster: NatsTestCluster = {
    servers,
    url: servers.map((server) => server.url).join(','),
    kill: async (index) => {
      const server = servers[index]!;
      server.proc.kill('SIGKILL');
      await server.proc.exited;
    },
    stop: async () => {
      for (const server of servers) server.proc.kill('SIGKILL');
      await Promise.all(servers.map((server) => server.proc.exited));
      rmSync(root, { recursive: true, force: true });
    },
  };
  const describe = (): string => servers.map((server) => `--- ${server.name} (exit ${server.proc.exitCode})\n${server.output}`).join('\n');
  try {
    await waitUntil(() => servers.some((server) => /JetStream cluster new metadata leader/.test(server.output)), 20_000, describe);
    // A metadata leader needs only a quorum: wait until a stream with a replica on every
    // server can be placed, i.e. every server has joined (a loaded machine can take seconds).
    await waitForFullPlacement(cluster.url, size, 30_000, () => {
      if (servers.some((server) => server.proc.exitCode !== null)) throw new Error(`a NATS server exited during start-up:\n${describe()}`);
    });
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

async function waitForFullPlacement(url: string, replicas: number, timeoutMs: number, checkAlive: () => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const nc = await connect({ servers: url.split(','), reconnectTimeWait: 100 });
  try {
    const jsm = await jetstreamManager(nc);
    for (;;) {
      checkAlive();
      try {
        await jsm.streams.add({ name: 'TEST_READINESS_PROBE', subjects: ['test.readiness.probe'], num_replicas: replicas });
        await jsm.streams.delete('TEST_READINESS_PROBE');
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`no stream with ${replicas} replicas could be placed within ${timeoutMs} ms: ${String(error)}`);
        await Bun.sleep(200);
      }
    }
  } finally {
    await nc.close();
  }
}

async function waitUntil(ready: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`NATS cluster not ready within ${timeoutMs} ms:\n${describe()}`);
    await Bun.sleep(50);
  }
}

async function pump(stream: ReadableStream<Uint8Array>, onText: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) onText(decoder.decode(chunk, { stream: true }));
  } catch {
    // the pipe closed with the process
  }
}
