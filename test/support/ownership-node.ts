/**
 * One PartitionOwnership in a process of its own, for the test that kills a node with
 * SIGKILL. Settings come from the environment; every hook call is a line on stdout
 * (`taken <partition> <epoch>`, `released <partition>`, `lost <partition>`), and `ready`
 * once it has joined. It exits when its stdin (a pipe from the test) closes.
 */
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { PartitionOwnership } from '../../cluster/partition-ownership.ts';
import { Placement } from '../../cluster/placement.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const nc = await connect({ servers: env('NATS_URL').split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
const kvm = new Kvm(jetstream(nc));
const say = (line: string): void => void process.stdout.write(`${line}\n`);
await PartitionOwnership.start({
  leases: await kvm.open(env('LEASES_BUCKET')),
  nodes: await kvm.open(env('NODES_BUCKET')),
  node: env('NODE'),
  url: `http://${env('NODE')}.test`,
  leaseMs: Number(env('LEASE_MS')),
  placement: new Placement(JSON.parse(env('PARTITIONS')) as string[], Number(env('STANDBYS'))),
  // it keeps every partition and says so, as a node of this version does (one that says nothing is an older version)
  keeps: () => JSON.parse(env('PARTITIONS')) as string[],
  log: (line) => process.stderr.write(`${line}\n`),
  onTaken: async (partition, epoch) => say(`taken ${partition} ${epoch}`),
  release: async (partition) => say(`released ${partition}`),
  onLost: (partition) => say(`lost ${partition}`),
});
say('ready');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
