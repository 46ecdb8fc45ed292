/**
 * The relying party of single sign-on, on `openid-client` (authorization code flow with
 * PKCE; `state` and `nonce` checked; the ID token's signature, issuer, audience, expiry
 * and nonce verified by the library against the provider's discovered keys: the signature
 * check is switched on explicitly, the library's default skips it for a token from the
 * token endpoint; the callback's `iss` must name the configured issuer too).
 *
 * `start` makes a fresh state, nonce and PKCE verifier, keeps them in a short-lived cookie
 * signed with a key derived from the session secret (so any node of a cluster can finish
 * the sign-in), and answers the provider's authorization address. `finish` checks the
 * callback's state against that cookie, refuses a state already used (a replayed
 * callback), exchanges the code and verifies the ID token, and reads the user's email and
 * groups (from the ID token, or the userinfo endpoint when the token lacks the groups).
 * Anything wrong is an `SsoRefusal` with a code the sign-in page explains; nothing is
 * signed in.
 *
 * Discovery happens at the first sign-in and is kept; a failed one is tried again at the
 * next.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import * as client from 'openid-client';
import type { SsoIdentity } from '../../actors/services/sso-service.ts';
import type { OidcSettings } from './oidc-settings.ts';

export const SSO_STATE_COOKIE = 'sso_state';
/** a sign-in must come back from the provider within this */
export const SSO_STATE_TTL_MS = 10 * 60_000;
/** states used, remembered for their lifetime so a callback cannot be replayed */
const USED_STATES_MAX = 100_000;

export type SsoRefusalCode = 'state' | 'provider' | 'token' | 'unavailable';

export class SsoRefusal extends Error {
  constructor(
    readonly code: SsoRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  /** the page to go to afterwards (a path of this site) */
  next: string;
  expiresAtMs: number;
}

export class OidcClient {
  private configuration: Promise<client.Configuration> | undefined;
  private readonly key: Buffer;
  private readonly usedStates = new LRUCache<string, true>({ max: USED_STATES_MAX, ttl: SSO_STATE_TTL_MS });

  constructor(
    private readonly settings: OidcSettings,
    sessionSecret: string,
    private readonly nowMs: () => number = Date.now,
  ) {
    // Stryker disable next-line StringLiteral: the label only keeps this key apart from the session secret's other uses
    this.key = createHmac('sha256', sessionSecret).update('sso-state').digest();
  }

  /** The provider's authorization address for a new sign-in, and the cookie that remembers it. */
  async start(redirectUri: string, next: string): Promise<{ location: string; cookie: string }> {
    const config = await this.discovered();
    const pending: PendingSignIn = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      next,
      expiresAtMs: this.nowMs() + SSO_STATE_TTL_MS,
    };
    const location = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      response_type: 'code',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { location: location.href, cookie: this.sign(pending) };
  }

  /** The verified identity of a callback; `cookie` is the state cookie the browser sent back. */
  async finish(callbackUrl: URL, cookie: string | undefined, redirectUri: string): Promise<{ identity: SsoIdentity; next: string }> {
    const pending = this.verify(cookie);
    const state = callbackUrl.searchParams.get('state');
    if (state === null || state !== pending.state) throw new SsoRefusal('state', 'the sign-in came back with a state this browser did not start');
    if (this.usedStates.has(state)) throw new SsoRefusal('state', 'this sign-in was used already');
    this.usedStates.set(state, true);
    const error = callbackUrl.searchParams.get('error');
    if (error !== null) throw new SsoRefusal('provider', `the identity provider refused: ${error}${describe(callbackUrl.searchParams.get('error_description'))}`);
    const config = await this.discovered();
    // the library compares the callback with the redirect URI it was started with
    const current = new URL(redirectUri);
    current.search = callbackUrl.search;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    } catch (failure) {
      throw new SsoRefusal('token', `the identity provider's answer was refused: ${failure instanceof Error ? failure.message : String(failure)}`);
    }
    const claims = tokens.claims()!;
    let groups = claims[this.settings.groupsClaim];
    let email = claims.email;
    let emailVerified = claims.email_verified;
    if (groups === undefined || email === undefined) {
      const userInfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub).catch((failure: unknown) => {
        throw new SsoRefusal('token', `the identity provider's userinfo was refused: ${failure instanceof Error ? failure.message : String(failure)}`);
      });
      groups ??= userInfo[this.settings.groupsClaim];
      email ??= userInfo.email;
      emailVerified ??= userInfo.email_verified;
    }
    return {
      identity: {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof email === 'string' ? email : null,
        emailVerified: emailVerified === true,
        groups: Array.isArray(groups) ? groups.filter((group): group is string => typeof group === 'string') : typeof groups === 'string' ? [groups] : [],
      },
      next: pending.next,
    };
  }

  private discovered(): Promise<client.Configuration> {
    this.configuration ??= client
      .discovery(this.settings.issuer, this.settings.clientId, this.settings.clientSecret, undefined, {
        // The library skips the ID token's signature when it comes straight from the token
        // endpoint (OIDC Core 3.1.3.7 allows it over TLS); it is checked here all the same,
        // against the provider's published keys: a token not signed by the provider is refused.
        execute: [client.enableNonRepudiationChecks, ...(this.settings.allowHttp ? [client.allowInsecureRequests] : [])],
      })
      .catch((failure: unknown) => {
        this.configuration = undefined;
        throw new SsoRefusal('unavailable', `the identity provider at ${this.settings.issuer.href} cannot be reached or refused discovery: ${failure instanceof Error ? failure.message : String(failure)}`);
      });
    return this.configuration;
  }

  private sign(pending: PendingSignIn): string {
    const body = Buffer.from(JSON.stringify(pending)).toString('base64url');
    return `${body}.${createHmac('sha256', this.key).update(body).digest('base64url')}`;
  }

  private verify(cookie: string | undefined): PendingSignIn {
    const [body, signature] = cookie?.split('.') ?? [];
    if (body === undefined || signature === undefined) throw new SsoRefusal('state', 'this browser started no sign-in (or its cookie was lost): start again');
    const expected = createHmac('sha256', this.key).update(body).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new SsoRefusal('state', 'the sign-in cookie was not made by this service');
    const pending = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as PendingSignIn;
    if (pending.expiresAtMs <= this.nowMs()) throw new SsoRefusal('state', 'the sign-in took too long: start again');
    return pending;
  }
}

function describe(description: string | null): string {
  return description === null ? '' : ` (${description.slice(0, 200)})`;
}
