/**
 * Who may scrape GET /metrics: a request carrying `Authorization: Bearer <METRICS_TOKEN>`.
 * Compared in constant time (digests of equal length), so response timing does not
 * reveal how much of a guess was right.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../http/api-key.ts';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

export function scrapeAllowed(token: string): (request: Request) => boolean {
  const expected = digest(token);
  return (request) => {
    const given = bearerToken(request);
    return given !== null && timingSafeEqual(digest(given), expected);
  };
}
