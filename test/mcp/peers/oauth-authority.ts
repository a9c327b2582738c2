/**
 * The authorization server behind the OAuth test peer: an `OAuthServerProvider` for the
 * SDK's `mcpAuthRouter` (notes §2.4), with what the SDK's demo provider lacks: refresh
 * tokens that rotate, revocation, and a real 401 (`InvalidTokenError`) for a token it does
 * not know, so the client's refresh and re-authorization paths run for real.
 *
 * It approves every authorization at once (a 302 to `redirect_uri?code&state`), standing
 * in for an owner who clicks "allow". The test steers it through the controls at the end.
 */
import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

interface IssuedCode {
  readonly clientId: string;
  readonly challenge: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
}

interface Grant {
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** Unix ms. */
  readonly expires: number;
}

/** What the authority has done, for assertions. */
export interface AuthorityCounts {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
  refusedTokens: number;
}

const ACCESS_TTL_S = 3600;

function token(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

/** An auto-approving OAuth authorization server with test controls. */
export class TestAuthority implements OAuthServerProvider {
  /** A credential that always verifies: the "secret the tenant holds" of a bearer link. */
  readonly staticToken = token('static');
  readonly counts: AuthorityCounts = {
    registrations: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    refusedTokens: 0,
  };
  /** The parameters of the last authorization request, as the authorize endpoint parsed them. */
  lastAuthorization: AuthorizationParams | undefined;

  readonly #clients = new Map<string, OAuthClientInformationFull>();
  readonly #codes = new Map<string, IssuedCode>();
  readonly #access = new Map<string, Grant>();
  readonly #refresh = new Map<string, Grant>();
  #refuseRegistration = false;
  #failRefresh = false;

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: (clientId) => this.#clients.get(clientId),
      registerClient: (client) => {
        if (this.#refuseRegistration)
          throw new InvalidClientMetadataError('registration is closed');
        // The SDK's register handler has minted client_id (and a secret) already.
        const full = client as OAuthClientInformationFull;
        this.#clients.set(full.client_id, full);
        this.counts.registrations += 1;
        return full;
      },
    };
  }

  authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: Response,
  ): Promise<void> {
    if (!client.redirect_uris.includes(params.redirectUri)) {
      throw new InvalidRequestError('unregistered redirect_uri');
    }
    this.lastAuthorization = params;
    this.counts.authorizations += 1;
    const code = token('code');
    this.#codes.set(code, {
      clientId: client.client_id,
      challenge: params.codeChallenge,
      redirectUri: params.redirectUri,
      scopes: params.scopes ?? [],
    });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(302, target.href);
    return Promise.resolve();
  }

  challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const issued = this.#codes.get(code);
    if (issued?.clientId !== client.client_id)
      throw new InvalidGrantError('unknown authorization code');
    return Promise.resolve(issued.challenge);
  }

  exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    redirectUri?: string,
  ): Promise<OAuthTokens> {
    // PKCE itself is checked by the SDK's token handler before this is called.
    const issued = this.#codes.get(code);
    this.#codes.delete(code);
    if (issued?.clientId !== client.client_id)
      throw new InvalidGrantError('unknown authorization code');
    if (redirectUri !== undefined && redirectUri !== issued.redirectUri) {
      throw new InvalidGrantError('redirect_uri does not match the authorization request');
    }
    this.counts.codeExchanges += 1;
    return Promise.resolve(this.#issue(client.client_id, issued.scopes));
  }

  exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
  ): Promise<OAuthTokens> {
    const grant = this.#refresh.get(refreshToken);
    if (this.#failRefresh) throw new InvalidGrantError('refresh refused');
    if (grant?.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    this.#refresh.delete(refreshToken);
    this.counts.refreshes += 1;
    return Promise.resolve(this.#issue(client.client_id, grant.scopes));
  }

  verifyAccessToken(presented: string): Promise<AuthInfo> {
    if (presented === this.staticToken) {
      return Promise.resolve({
        token: presented,
        clientId: 'static',
        scopes: [],
        expiresAt: Math.floor(Date.now() / 1000) + ACCESS_TTL_S,
      });
    }
    const grant = this.#access.get(presented);
    if (grant === undefined || grant.expires <= Date.now()) {
      this.counts.refusedTokens += 1;
      throw new InvalidTokenError('unknown, revoked or expired token');
    }
    return Promise.resolve({
      token: presented,
      clientId: grant.clientId,
      scopes: [...grant.scopes],
      expiresAt: Math.floor(grant.expires / 1000),
    });
  }

  revokeToken(
    _client: OAuthClientInformationFull,
    request: OAuthTokenRevocationRequest,
  ): Promise<void> {
    this.#access.delete(request.token);
    this.#refresh.delete(request.token);
    return Promise.resolve();
  }

  // Test controls.

  /** Every access and refresh token stops working (an owner revoked the app). */
  revokeAll(): void {
    this.#access.clear();
    this.#refresh.clear();
  }

  /** Every access token lapses; refresh tokens keep working. */
  expireAccessTokens(): void {
    this.#access.clear();
  }

  /** Refresh requests answer `invalid_grant` while on. */
  failRefresh(on: boolean): void {
    this.#failRefresh = on;
  }

  /** Dynamic client registration answers `invalid_client_metadata` while on. */
  refuseRegistration(on: boolean): void {
    this.#refuseRegistration = on;
  }

  #issue(clientId: string, scopes: readonly string[]): OAuthTokens {
    const access = token('at');
    const refresh = token('rt');
    const grant = { clientId, scopes, expires: Date.now() + ACCESS_TTL_S * 1000 };
    this.#access.set(access, grant);
    this.#refresh.set(refresh, grant);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TTL_S,
      refresh_token: refresh,
      ...(scopes.length === 0 ? {} : { scope: scopes.join(' ') }),
    };
  }
}
