/**
 * The account of what each connection has in flight (src/http/in-flight.ts), without
 * HTTP: admission against the request and byte caps, bytes charged past the declared
 * length as chunks arrive, and everything given back once, per connection.
 */
import { describe, expect, test } from 'bun:test';
import { refusal } from '../support/refusal.ts';
import { IN_FLIGHT_DEFAULTS, InFlightLimiter } from '../../src/http/in-flight.ts';

describe('in-flight limits per connection', () => {
  test('the defaults: 32 requests and 64 MiB, enough for a dozen bodies of the largest size', () => {
    expect(IN_FLIGHT_DEFAULTS).toEqual({ requestsMax: 32, bytesMax: 64 * 1024 * 1024 });
    expect(new InFlightLimiter().limits).toEqual(IN_FLIGHT_DEFAULTS);
  });

  test('requests up to the cap are admitted, the next is refused 429 with Retry-After and closes the connection', () => {
    const limiter = new InFlightLimiter({ requestsMax: 2, bytesMax: 1000 });
    limiter.admit('a', null);
    limiter.admit('a', 10);
    expect(limiter.usage('a')).toEqual({ requests: 2, bytes: 10 });
    const error = refusal(() => limiter.admit('a', null));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.headers).toEqual({ 'Retry-After': '1', connection: 'close' });
    expect(error.details).toEqual({ connection: ['2 requests of this connection are in flight, the most allowed at once is 2'] });
    expect(error.message).toBe(
      'too much in flight for this connection: 2 requests of this connection are in flight, the most allowed at once is 2; retry when an earlier request has been answered',
    );
    expect(limiter.usage('a')).toEqual({ requests: 2, bytes: 10 }); // a refusal takes nothing
  });

  test('connections are counted apart', () => {
    const limiter = new InFlightLimiter({ requestsMax: 1, bytesMax: 100 });
    limiter.admit('a', 100);
    expect(() => limiter.admit('b', 100)).not.toThrow();
    expect(limiter.usage('b')).toEqual({ requests: 1, bytes: 100 });
    expect(limiter.usage('nobody')).toEqual({ requests: 0, bytes: 0 });
  });

  test('a declared length is charged at admission; one past the byte cap is refused, exactly at it admitted', () => {
    const limiter = new InFlightLimiter({ requestsMax: 10, bytesMax: 100 });
    limiter.admit('a', 60);
    expect(refusal(() => limiter.admit('a', 41)).details).toEqual({ connection: ["the bodies of this connection's requests in flight would exceed 100 bytes"] });
    expect(limiter.usage('a')).toEqual({ requests: 1, bytes: 60 });
    limiter.admit('a', 40);
    expect(limiter.usage('a')).toEqual({ requests: 2, bytes: 100 });
  });

  test('bytes past the declared length are charged as they arrive, and refused past the cap', () => {
    const limiter = new InFlightLimiter({ requestsMax: 10, bytesMax: 100 });
    const declared = limiter.admit('a', 30);
    declared.feed(new Uint8Array(20));
    declared.feed(new Uint8Array(10));
    expect(limiter.usage('a').bytes).toBe(30); // within what was declared
    declared.feed(new Uint8Array(5));
    expect(limiter.usage('a').bytes).toBe(35);
    const chunked = limiter.admit('a', null);
    chunked.feed(new Uint8Array(65));
    expect(limiter.usage('a').bytes).toBe(100);
    expect(refusal(() => chunked.feed(new Uint8Array(1))).code).toBe('RATE_LIMITED');
    expect(limiter.usage('a').bytes).toBe(100);
  });

  test('release gives back the request and every byte charged, once; an idle connection is forgotten', () => {
    const limiter = new InFlightLimiter({ requestsMax: 2, bytesMax: 100 });
    const first = limiter.admit('a', 10);
    first.feed(new Uint8Array(30));
    const second = limiter.admit('a', null);
    second.feed(new Uint8Array(5));
    first.release();
    first.release();
    expect(limiter.usage('a')).toEqual({ requests: 1, bytes: 5 });
    second.release();
    expect(limiter.usage('a')).toEqual({ requests: 0, bytes: 0 });
    // what was given back can be taken again in full
    limiter.admit('a', 100);
    limiter.admit('a', 0);
    expect(() => limiter.admit('a', 0)).toThrow();
  });
});
