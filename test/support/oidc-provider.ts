/// <reference path="./oidc-provider-module.d.ts" />
/**
 * A real OpenID Connect provider on loopback for the single sign-on tests: `oidc-provider`
 * (a certified implementation) with its development login and consent pages, an RSA
 * signing key the tests also hold (to sign tokens the provider never issued), the
 * `jobwatch` client and a second client, and people with emails and groups.
 *
 * `signIn` walks the provider's pages over HTTP as a browser would (its cookies, the
 * login form, the consent form) and returns the callback address it sends the browser to.
 */
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface ProviderPerson {
  email: string;
  emailVerified?: boolean;
  groups: string[];
}

export const CLIENT_ID = 'jobwatch';
export const CLIENT_SECRET = 'a client secret for the tests, long enough';
export const OTHER_CLIENT_ID = 'another-app';
export const OTHER_CLIENT_SECRET = 'the other app secret, long enough too';

export interface TestProvider {
  issuer: string;
  /** the provider's signing key, private part included (to forge tokens with its own key) */
  signingKey: JWK;
  people: Map<string, ProviderPerson>;
  signIn(authorizationUrl: string, login: string): Promise<URL>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}

export async function startOidcProvider(redirectUris: string[], people: Record<string, ProviderPerson>): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const known = new Map(Object.entries(people));
  const provider = new Provider(issuer, {
    clients: [
      { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] },
      { client_id: OTHER_CLIENT_ID, client_secret: OTHER_CLIENT_SECRET, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['cookie key for the test provider'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    // the claims of the scopes asked for go into the ID token, as many providers do
    conformIdTokenClaims: false,
    findAccount: async (_context: unknown, sub: string) => {
      const person = known.get(sub);
      if (person === undefined) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: person.email, email_verified: person.emailVerified ?? true, groups: person.groups }) };
    },
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  async function signIn(authorizationUrl: string, login: string): Promise<URL> {
    const cookies = new Map<string, string>();
    const remember = (response: Response) => {
      for (const header of response.headers.getSetCookie()) {
        const [pair] = header.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
    };
    const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let url = new URL(authorizationUrl);
    for (let step = 0; step < 20; step++) {
      if (url.origin !== issuer) return url; // back at the relying party: the callback
      const response = await fetch(url, { redirect: 'manual', headers: { cookie: cookieHeader() } });
      remember(response);
      if (response.status >= 300 && response.status < 400) {
        url = new URL(response.headers.get('location')!, url);
        continue;
      }
      const page = await response.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
      const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
      if (action === undefined || prompt === undefined) throw new Error(`the provider answered ${response.status} without a form: ${page.slice(0, 300)}`);
      const form: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt };
      const submitted = await fetch(new URL(action, url), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      });
      remember(submitted);
      url = new URL(submitted.headers.get('location')!, url);
    }
    throw new Error('the provider kept asking: no callback after 20 steps');
  }

  return {
    issuer,
    signingKey,
    people: known,
    signIn,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
