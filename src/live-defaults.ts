/** Limits of the live stream in production (tests pass smaller intervals). */
import type { LiveUpdatesOptions } from '../actors/live/live-updates.ts';

/** `streamsPerUserMax`, `resumeGraceMs` and the resume buffer's bytes come from the environment (config.ts). */
export const LIVE_UPDATES_DEFAULTS: Omit<LiveUpdatesOptions, 'streamsPerUserMax' | 'resumeGraceMs' | 'hub'> & {
  hub: Omit<LiveUpdatesOptions['hub'], 'ringBufferBytesMax'>;
} = {
  hub: {
    ringBufferEventsMax: 10_000,
    // must exceed one ingest batch (1,000 events of ~0.5 KB), or healthy clients get cut off
    subscriberBufferBytesMax: 8 * 1024 * 1024,
    flushIntervalMs: 10,
    keepAliveIntervalMs: 15_000,
  },
  livenessCheckIntervalMs: 1_000,
};
