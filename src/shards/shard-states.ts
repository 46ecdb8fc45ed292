/**
 * A shard as /api/health names it: `starting` (recovering its log), `ready`, `down` (it ended
 * and is being started again) or `halted` (its log failed; it refuses writes until restarted).
 */
export const SHARD_STATES = ['starting', 'ready', 'down', 'halted'] as const;
export type ShardHealthState = (typeof SHARD_STATES)[number];

export interface ShardHealth {
  shard: number;
  state: ShardHealthState;
}
