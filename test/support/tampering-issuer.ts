/**
 * A man in the middle between jobwatch and the test provider (oidc-provider.ts), for the
 * refusal tests: jobwatch is configured with this proxy as its issuer. Discovery names the
 * proxy as issuer and token endpoint (the provider's authorization page and keys stay the
 * provider's own); each token answer of the provider is passed on with its ID token
 * re-signed with the claims `tamper` makes of it (and the key it picks), so a test can
 * hand jobwatch a token for another client, an expired one, one signed by another key,
 * one from another issuer. `tamper` left as is passes the provider's answer through
 * re-signed with the provider's key and the proxy as issuer: the honest path works.
 */
import { decodeJwt, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { TestProvider } from './oidc-provider.ts';

export interface Tampering {
  /** the claims of the ID token to send (given the honest ones, with `iss` the proxy) */
  claims?: (claims: JWTPayload) => JWTPayload;
  /** sign with this key instead of the provider's */
  key?: JWK;
  /** the issuer discovery names (default the proxy itself) */
  discoveredIssuer?: (proxy: string) => string;
}

export interface TamperingIssuer {
  issuer: string;
  tampering: Tampering;
  stop(): Promise<void>;
}

export function startTamperingIssuer(provider: TestProvider): TamperingIssuer {
  const state: { tampering: Tampering } = { tampering: {} };
  const server: { port?: number } = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (request): Promise<Response> => {
      const url = new URL(request.url);
      const proxy: string = `http://127.0.0.1:${server.port}`;
      const upstream = new URL(url.pathname + url.search, provider.issuer);
      if (url.pathname === '/.well-known/openid-configuration') {
        const document = (await (await fetch(upstream)).json()) as Record<string, unknown>;
        return Response.json({ ...document, issuer: state.tampering.discoveredIssuer?.(proxy) ?? proxy, token_endpoint: `${proxy}/token`, userinfo_endpoint: `${proxy}/me` });
      }
      const headers = new Headers(request.headers);
      // the provider sees its own host, and answers what fetch hands on as it is
      for (const name of ['host', 'accept-encoding', 'content-length']) headers.delete(name);
      const answer = await fetch(upstream, { method: request.method, headers, body: request.method === 'GET' ? undefined : await request.arrayBuffer(), redirect: 'manual' });
      if (url.pathname !== '/token' || answer.status !== 200) {
        const passed = new Headers(answer.headers);
        for (const name of ['content-encoding', 'content-length', 'transfer-encoding']) passed.delete(name);
        return new Response(await answer.arrayBuffer(), { status: answer.status, headers: passed });
      }
      const tokens = (await answer.json()) as { id_token: string };
      const honest = { ...decodeJwt(tokens.id_token), iss: proxy };
      const claims = state.tampering.claims?.(honest) ?? honest;
      const key = state.tampering.key ?? provider.signingKey;
      const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(await importJWK(key, 'RS256'));
      return Response.json({ ...tokens, id_token: idToken });
    },
  });
  return {
    issuer: `http://127.0.0.1:${server.port}`,
    get tampering() {
      return state.tampering;
    },
    set tampering(tampering: Tampering) {
      state.tampering = tampering;
    },
    stop: async () => void (await (server as { stop(force: boolean): Promise<void> }).stop(true)),
  };
}
