/**
 * What a shard's worker thread is told before anything else: which shard it is, where its
 * store is, and the service's settings, as plain data (a message is cloned, so the one
 * setting that is an object with behaviour, TRUSTED_PROXIES, travels as its text).
 */
import type { Config } from '../config.ts';
import { TrustedProxies } from '../http/trusted-proxies.ts';
import type { ServiceTimers } from '../service/background-work.ts';

export type PlainConfig = Omit<Config, 'trustedProxies'> & { trustedProxies: string };

export interface ShardWorkerInit {
  t: 'init';
  index: number;
  shards: number;
  storeDir: string;
  sessionSecret: string;
  config: PlainConfig;
  timers: ServiceTimers;
}

export function plainConfig(config: Config): PlainConfig {
  return { ...config, trustedProxies: config.trustedProxies.entries.join(',') };
}

export function configOfWorker(plain: PlainConfig): Config {
  return { ...plain, trustedProxies: TrustedProxies.parse(plain.trustedProxies) };
}
