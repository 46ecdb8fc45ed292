/** How the Metrics page writes durations, rates and changes. */
import { describe, expect, test } from 'bun:test';
import { amount, change, duration, percent, rate } from '../../ui/src/pages/metrics/format.ts';

describe('metrics page figures', () => {
  test('a rate under one a minute is written per hour, under one an hour per day', () => {
    expect(rate(12.3)).toBe('12/min');
    expect(rate(2.345)).toBe('2.3/min');
    expect(rate(0.5)).toBe('30/h');
    expect(rate(1 / 360)).toBe('4/day');
    expect(rate(0)).toBe('0/min');
  });

  test('amounts keep two significant digits under 10; durations under 1 ms read as such, and 0 as 0', () => {
    expect(amount(0.0028)).toBe('0.0028');
    expect(amount(0.25)).toBe('0.25');
    expect(amount(57.6)).toBe('58');
    expect(duration(0.5)).toBe('<1 ms');
    expect(duration(0)).toBe('0');
    expect(duration(null)).toBe('–');
    expect(duration(90_000)).toBe('1 min 30 s');
  });

  test('a change against the period before is signed, and absent when either side is missing or equal', () => {
    expect(change(110, 100)).toBe('+10 %');
    expect(change(95, 100)).toBe('-5.0 %');
    expect(change(null, 100)).toBeNull();
    expect(change(5, 0)).toBeNull();
    expect(change(5, 5)).toBeNull();
    expect(percent(0.5)).toBe('50 %');
    expect(percent(0.012)).toBe('1.2 %');
  });
});
