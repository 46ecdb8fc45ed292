/**
 * A queue's figures in words: the range's throughput at a readable scale, and the facts its
 * agent reads from the job system (a queue snapshot's `extensions`): BullMQ's counts per
 * state, Sidekiq's latency (how long the oldest job has waited).
 */
import { shortDuration } from '../../lib/time.ts';

/** One decimal below 10, none above: "2.1", "2", "13". */
const short = (n: number) => String(n < 10 ? Math.round(n * 10) / 10 : Math.round(n));

/** Jobs per second as per minute, or per hour when that reads better: "12/min", "1.5/min", "40/h", "< 0.1/h". */
export function rate(perSecond: number | null): string {
  if (perSecond === null) return '–';
  const perMinute = perSecond * 60;
  if (perMinute >= 1 || perMinute === 0) return `${short(perMinute)}/min`;
  return perMinute * 60 < 0.1 ? '< 0.1/h' : `${short(perMinute * 60)}/h`;
}

/** The counts worth a glance, by BullMQ's state names: the first three shown even at 0, the others only when not. */
const COUNTS = ['waiting', 'delayed', 'failed', 'prioritized', 'active', 'waitingChildren'];

/** "12 waiting · 3 delayed · 0 failed", "oldest waited 4.2 s"; '' when the agent sends none of them (whether it is paused is the queue's badge). */
export function jobSystemFacts(extensions: Record<string, unknown>): string {
  const facts = COUNTS.flatMap((key, index) => {
    const value = extensions[key];
    return typeof value === 'number' && (index < 3 || value > 0) ? [`${value.toLocaleString()} ${key === 'waitingChildren' ? 'waiting for children' : key}`] : [];
  });
  if (typeof extensions.latencyMs === 'number') facts.push(`oldest waited ${shortDuration(extensions.latencyMs)}`);
  return facts.join(' · ');
}
