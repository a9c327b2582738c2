/**
 * A real OpenID Connect provider on loopback for the consent page's sign-in:
 * oidc-provider, in process, with its development login and consent screens (any
 * login name signs in as that `sub`), one public client that must use PKCE, and RS256 ID
 * tokens. The client's redirect URI is known only once the service listens, so the issuer
 * listens first and its client is registered with `register`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';

export interface OidcProviderPeer {
  /** `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** Registers the public client `clientId` with the one redirect URI it may use. */
  register(clientId: string, redirectUri: string): Promise<void>;
  close(): Promise<void>;
}

export async function startOidcProvider(): Promise<OidcProviderPeer> {
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const server = createServer((request, response) => {
    if (handler === undefined) {
      response.writeHead(503).end();
      return;
    }
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const key = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };

  return {
    issuer,
    register: (clientId, redirectUri) => {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            token_endpoint_auth_method: 'none',
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        jwks: { keys: [key] },
        // The page exchanges its code from the browser: the token endpoint answers CORS
        // requests from the service's origin, as README asks of a real provider.
        clientBasedCORS: (_ctx: unknown, origin: string) => origin === new URL(redirectUri).origin,
        ttl: {
          AccessToken: 600,
          AuthorizationCode: 60,
          IdToken: 600,
          Interaction: 600,
          Session: 600,
          Grant: 600,
        },
        cookies: { keys: [randomUUID()] },
        // The login name is the account: the ID token's `sub`.
        findAccount: (_ctx: unknown, sub: string) => ({
          accountId: sub,
          claims: () => ({ sub }),
        }),
      });
      handler = provider.callback();
      return Promise.resolve();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
      }),
  };
}

/**
 * Goes through the provider's own screens in `page`, which a sign-in sent there: any
 * login name signs in as that subject, with any password, and the consent is given.
 */
export async function signInAtProvider(page: Page, user: string): Promise<void> {
  await page.locator('input[name="login"]').waitFor();
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill('any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}
