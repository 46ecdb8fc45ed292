/**
 * The login limiter on its own, with an injected clock and small limits, one layer at a
 * time: exact waits at and around every boundary. (login-limits.test.ts and
 * client-address.test.ts check the same through the login route.)
 */
import { describe, expect, test } from 'bun:test';
import { LOGIN_LIMITER_DEFAULTS, LoginLimiter, type LoginAttempt, type LoginLimiterOptions } from '../../actors/accounts/login-limiter.ts';

const T = 1_000_000;
/** Every layer so loose that it never limits; each test tightens the one it is about. */
const LOOSE: LoginLimiterOptions = {
  pairFailuresFree: 1_000,
  pairBackoffBaseMs: 1_000,
  pairBackoffMaxMs: 8_000,
  pairForgetMs: 60_000,
  addressFailuresMax: 1_000,
  addressWindowMs: 10_000,
  emailBurst: 1_000,
  emailRefillMs: 2_000,
  deviceFailuresMax: 1_000,
  deviceWindowMs: 10_000,
  trackedKeysMax: 1_000,
};

function admitted(result: LoginAttempt | { waitSeconds: number }): LoginAttempt {
  if ('waitSeconds' in result) throw new Error(`refused: wait ${result.waitSeconds} s`);
  return result;
}

function waitOf(result: LoginAttempt | { waitSeconds: number }): number {
  return 'waitSeconds' in result ? result.waitSeconds : 0;
}

describe('per address and email: free failures, then a doubling backoff', () => {
  const options = { ...LOOSE, pairFailuresFree: 3 };

  test('the third failure starts a wait of the base; each further one doubles it, up to the cap', () => {
    const limiter = new LoginLimiter(options);
    expect(admitted(limiter.admit('10.0.0.1', 'ada', T))).toEqual({ address: '10.0.0.1', email: 'ada' });
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    admitted(limiter.admit('10.0.0.1', 'ada', T)); // the third: counted, and from now on a wait
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(1);
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 999))).toBe(1);
    let now = T + 1_000;
    for (const waitMs of [2_000, 4_000, 8_000, 8_000, 8_000]) {
      admitted(limiter.admit('10.0.0.1', 'ada', now));
      expect(waitOf(limiter.admit('10.0.0.1', 'ada', now + waitMs - 1))).toBe(1);
      expect(waitOf(limiter.admit('10.0.0.1', 'ada', now))).toBe(waitMs / 1_000);
      now += waitMs;
    }
  });

  test('only that address is slowed for that email', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 3; i++) admitted(limiter.admit('10.0.0.1', 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(1);
    admitted(limiter.admit('10.0.0.2', 'ada', T));
    admitted(limiter.admit('10.0.0.1', 'bob', T));
  });

  test('a refused attempt counts nothing: it neither extends the wait nor grows the next one', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 3; i++) admitted(limiter.admit('10.0.0.1', 'ada', T));
    for (let i = 0; i < 10; i++) expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 500))).toBe(1);
    admitted(limiter.admit('10.0.0.1', 'ada', T + 1_000));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 1_000))).toBe(2);
  });

  test('a success clears its pair: the free failures are free again', () => {
    const limiter = new LoginLimiter(options);
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    limiter.succeeded(admitted(limiter.admit('10.0.0.1', 'ada', T)));
    for (let i = 0; i < 3; i++) admitted(limiter.admit('10.0.0.1', 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(1);
  });

  test('a pair quiet for pairForgetMs starts over; one quiet a millisecond less does not', () => {
    const remembered = new LoginLimiter(options);
    const forgotten = new LoginLimiter(options);
    for (const limiter of [remembered, forgotten]) for (let i = 0; i < 3; i++) admitted(limiter.admit('10.0.0.1', 'ada', T));
    // the fourth failure after the quiet time: a remembered pair waits 2 s after it, a fresh one nothing
    admitted(remembered.admit('10.0.0.1', 'ada', T + 59_999));
    expect(waitOf(remembered.admit('10.0.0.1', 'ada', T + 59_999))).toBe(2);
    admitted(forgotten.admit('10.0.0.1', 'ada', T + 60_000));
    expect(waitOf(forgotten.admit('10.0.0.1', 'ada', T + 60_000))).toBe(0);
  });

  test('the quiet time counts from the last admitted attempt', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 3; i++) admitted(limiter.admit('10.0.0.1', 'ada', T + i * 30_000 + (i === 2 ? -29_000 : 0)));
    // attempts at T, T+30 s, T+31 s: at T+61 s the pair was quiet 30 s only, so it is remembered
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 31_500))).toBe(1);
    admitted(limiter.admit('10.0.0.1', 'ada', T + 61_000));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 61_000))).toBe(2);
  });
});

describe('per address, across emails: a capped count per window', () => {
  const options = { ...LOOSE, addressFailuresMax: 5 };

  test('the sixth failure in the window waits until the window ends, in whole seconds rounded up', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 5; i++) admitted(limiter.admit('10.0.0.1', `user${i}`, T));
    expect(waitOf(limiter.admit('10.0.0.1', 'user9', T + 2_500))).toBe(8);
    expect(waitOf(limiter.admit('10.0.0.1', 'user9', T + 9_999))).toBe(1);
    admitted(limiter.admit('10.0.0.2', 'user9', T + 9_999));
    // a new window from T + 10 s, capped again
    for (let i = 0; i < 5; i++) admitted(limiter.admit('10.0.0.1', `again${i}`, T + 10_000));
    expect(waitOf(limiter.admit('10.0.0.1', 'again9', T + 10_000))).toBe(10);
  });

  test('a success gives back only its own attempt', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 4; i++) admitted(limiter.admit('10.0.0.1', `user${i}`, T));
    limiter.succeeded(admitted(limiter.admit('10.0.0.1', 'owner', T)));
    admitted(limiter.admit('10.0.0.1', 'user8', T));
    expect(waitOf(limiter.admit('10.0.0.1', 'user9', T))).toBe(10);
  });

  test('a success in a window that has been forgotten does not go below zero', () => {
    const limiter = new LoginLimiter({ ...options, trackedKeysMax: 1 });
    const attempt = admitted(limiter.admit('10.0.0.1', 'ada', T));
    limiter.succeeded(attempt);
    limiter.succeeded(attempt);
    for (let i = 0; i < 5; i++) admitted(limiter.admit('10.0.0.1', `user${i}`, T));
    expect(waitOf(limiter.admit('10.0.0.1', 'user9', T))).toBe(10);
  });
});

describe('per email, across addresses: a token bucket', () => {
  const options = { ...LOOSE, emailBurst: 4 };

  test('after the burst, one attempt per refill interval; the wait is the time to the next token, rounded up', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 4; i++) admitted(limiter.admit(`10.0.0.${i}`, 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.9', 'ada', T))).toBe(2);
    expect(waitOf(limiter.admit('10.0.0.9', 'ada', T + 1_000))).toBe(1);
    expect(waitOf(limiter.admit('10.0.0.9', 'ada', T + 1_999))).toBe(1);
    admitted(limiter.admit('10.0.0.9', 'bob', T));
    admitted(limiter.admit('10.0.0.9', 'ada', T + 2_000));
    expect(waitOf(limiter.admit('10.0.0.9', 'ada', T + 2_000))).toBe(2);
  });

  test('tokens refill up to the burst, not beyond', () => {
    const limiter = new LoginLimiter(options);
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    // a day later the bucket holds the burst (4), not 43,000 tokens
    for (let i = 0; i < 4; i++) admitted(limiter.admit(`10.0.1.${i}`, 'ada', T + 86_400_000));
    expect(waitOf(limiter.admit('10.0.2.1', 'ada', T + 86_400_000))).toBe(2);
  });

  test('a clock that steps back refills nothing', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 4; i++) admitted(limiter.admit(`10.0.0.${i}`, 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.9', 'ada', T - 60_000))).toBe(2);
  });

  test('a success gives its token back, never above the burst', () => {
    const limiter = new LoginLimiter(options);
    for (let i = 0; i < 3; i++) admitted(limiter.admit(`10.0.0.${i}`, 'ada', T));
    limiter.succeeded(admitted(limiter.admit('10.0.0.8', 'ada', T)));
    admitted(limiter.admit('10.0.0.9', 'ada', T)); // the token given back
    expect(waitOf(limiter.admit('10.0.0.9', 'ada', T))).toBe(2);

    const full = new LoginLimiter(options);
    const success = admitted(full.admit('10.0.0.8', 'bob', T));
    full.succeeded(success);
    full.succeeded(success); // a second give-back would make 5 tokens without the cap
    for (let i = 0; i < 4; i++) admitted(full.admit(`10.0.0.${i}`, 'bob', T));
    expect(waitOf(full.admit('10.0.0.9', 'bob', T))).toBe(2);
  });
});

describe('a known device: its own count, not the shared bucket', () => {
  /**
   * The attack as measured: 444 rotating addresses guessing at 15 attempts a second while
   * the owner, typing the right password once a second, tries to get in. The clock is
   * simulated: one step per guess.
   */
  function distributedGuesser(limiter: LoginLimiter, ownerDevice: string | undefined, seconds: number) {
    const addresses = Array.from({ length: 444 }, (_, i) => `10.${i >> 8}.${i & 255}.1`);
    let guessesTried = 0;
    let ownerIn = 0;
    let next = 0;
    for (let second = 0; second < seconds; second++) {
      for (let step = 0; step < 15; step++) {
        const nowMs = T + second * 1_000 + Math.floor((step * 1_000) / 15);
        if (!('waitSeconds' in limiter.admit(addresses[next++ % addresses.length]!, 'owner@example.com', nowMs))) guessesTried++;
      }
      const owner = limiter.admit('198.51.100.7', 'owner@example.com', T + second * 1_000 + 999, ownerDevice);
      if (!('waitSeconds' in owner)) {
        limiter.succeeded(owner);
        ownerIn++;
      }
    }
    return { guessesTried, ownerIn };
  }

  test('under a distributed guesser the owner on a known device gets in every time; the guesser stays at one guess per refill', () => {
    const seconds = 120;
    const { guessesTried, ownerIn } = distributedGuesser(new LoginLimiter(), 'the-owners-laptop', seconds);
    expect(ownerIn).toBe(seconds);
    const { emailBurst, emailRefillMs } = LOGIN_LIMITER_DEFAULTS;
    expect(guessesTried).toBeLessThanOrEqual(emailBurst + Math.ceil((seconds * 1_000) / emailRefillMs));
  });

  test('without a known device the owner waits with the guessers (what the device cookie is for)', () => {
    const seconds = 120;
    const { ownerIn } = distributedGuesser(new LoginLimiter(), undefined, seconds);
    expect(ownerIn).toBeLessThan(seconds / 4);
  });

  test('a known device skips the pair, address and email layers', () => {
    const limiter = new LoginLimiter({ ...LOOSE, pairFailuresFree: 1, addressFailuresMax: 1, emailBurst: 1 });
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(10);
    expect(admitted(limiter.admit('10.0.0.1', 'ada', T, 'device-1'))).toEqual({ address: '10.0.0.1', email: 'ada', device: 'device-1' });
  });

  test("past its own failures a device is locked out for the rest of its window (treated as unknown); others' devices are not", () => {
    const limiter = new LoginLimiter({ ...LOOSE, deviceFailuresMax: 3, emailBurst: 1, emailRefillMs: 1_000_000 });
    admitted(limiter.admit('10.0.0.9', 'ada', T)); // the guessers emptied ada's bucket
    for (let i = 0; i < 3; i++) admitted(limiter.admit('10.0.0.1', 'ada', T + i, 'stolen'));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 3, 'stolen'))).toBe(1_000); // the email bucket's wait
    admitted(limiter.admit('10.0.0.2', 'ada', T + 3, 'the-owners-laptop'));
    // the window (10 s from its first failure) over, the device has its count back
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T + 9_999, 'stolen'))).toBeGreaterThan(0);
    expect(admitted(limiter.admit('10.0.0.1', 'ada', T + 10_000, 'stolen')).device).toBe('stolen');
  });

  test('a locked-out device falls back to the unknown path and is admitted there when it has room', () => {
    const limiter = new LoginLimiter({ ...LOOSE, deviceFailuresMax: 1 });
    admitted(limiter.admit('10.0.0.1', 'ada', T, 'laptop'));
    expect(limiter.admit('10.0.0.1', 'ada', T, 'laptop')).toEqual({ address: '10.0.0.1', email: 'ada' });
  });

  test("a success on a device clears that device's failures only, and gives nothing to the shared layers", () => {
    const limiter = new LoginLimiter({ ...LOOSE, deviceFailuresMax: 2, emailBurst: 1 });
    admitted(limiter.admit('10.0.0.9', 'ada', T));
    admitted(limiter.admit('10.0.0.1', 'ada', T, 'laptop'));
    limiter.succeeded(admitted(limiter.admit('10.0.0.1', 'ada', T, 'laptop')));
    admitted(limiter.admit('10.0.0.1', 'ada', T, 'laptop'));
    admitted(limiter.admit('10.0.0.1', 'ada', T, 'laptop'));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T, 'laptop'))).toBe(2);
    expect(waitOf(limiter.admit('10.0.0.8', 'ada', T))).toBe(2);
  });
});

describe('limits together and memory', () => {
  test('a success whose address and email were forgotten meanwhile gives back nothing, and does not fail', () => {
    const limiter = new LoginLimiter({ ...LOOSE, trackedKeysMax: 1 });
    const early = admitted(limiter.admit('10.0.0.1', 'ada', T));
    admitted(limiter.admit('10.0.0.2', 'bob', T)); // evicts ada's pair, address and bucket
    expect(() => limiter.succeeded(early)).not.toThrow();
  });

  test('the longest of the waits is the answer', () => {
    const limiter = new LoginLimiter({ ...LOOSE, pairFailuresFree: 1, addressFailuresMax: 1, emailBurst: 1 });
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    // pair: 1 s, address window: 10 s, email: 2 s
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(10);
  });

  test('past trackedKeysMax the least recently seen keys are forgotten', () => {
    const limiter = new LoginLimiter({ ...LOOSE, pairFailuresFree: 1, trackedKeysMax: 2 });
    admitted(limiter.admit('10.0.0.1', 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(1);
    admitted(limiter.admit('10.0.0.2', 'bob', T));
    admitted(limiter.admit('10.0.0.3', 'cid', T));
    admitted(limiter.admit('10.0.0.1', 'ada', T));
  });

  test('the defaults are the documented ones', () => {
    expect(LOGIN_LIMITER_DEFAULTS).toEqual({
      pairFailuresFree: 5,
      pairBackoffBaseMs: 1_000,
      pairBackoffMaxMs: 900_000,
      pairForgetMs: 3_600_000,
      addressFailuresMax: 100,
      addressWindowMs: 900_000,
      emailBurst: 20,
      emailRefillMs: 3_000,
      deviceFailuresMax: 10,
      deviceWindowMs: 900_000,
      trackedKeysMax: 100_000,
    });
    const limiter = new LoginLimiter();
    for (let i = 0; i < 5; i++) admitted(limiter.admit('10.0.0.1', 'ada', T));
    expect(waitOf(limiter.admit('10.0.0.1', 'ada', T))).toBe(1);
  });
});
