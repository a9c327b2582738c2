/**
 * The OAuth side of connections (3.3 rows 3 and 5; decisions rows 43 and 45): minting a
 * fresh authorization URL, finishing an authorization at the callback, and reading a
 * refused token set as needing authorization again.
 *
 * The callback carries no console token: its `state` is a random single-use handle bound
 * to the tenant, the connection, its endpoint and the PKCE verifier (row 45), and it is
 * finished only from the browser the owner asked for it in (`callback-binding.ts`): a link opened anywhere else is refused and left unused. Once the
 * handle was good and the browser the owner's, the callback never answers with a problem:
 * the owner's browser is sent back to `return_to`, with `error` in the query when the link
 * did not finish.
 */
import { Conflict, Forbidden, InvalidRequest, UpstreamFailure } from '../errors.ts';
import type { McpAccess } from '../mcp/session.ts';
import { withMcpSession } from '../mcp/session.ts';
import { AuthorizationRequired } from '../mcp/failures.ts';
import { connectionProvider } from '../mcp/oauth.ts';
import type { ConnectionRef } from '../mcp/oauth-state.ts';
import type { ConnectionValue } from '../resources/types.ts';
import type { CallbackQuery } from '../schemas/connections.ts';
import type { Versioned } from '../storage/control-store.ts';
import { linkContext, timeoutMs, type ConnectionEffectDeps } from './effects.ts';
import { withParams } from './return-to.ts';
import type { ConnectionService } from './service.ts';
import { contextOf } from './stored.ts';

/** The most a read waits on the server to learn whether its token still opens (GET). */
export const CHECK_TIMEOUT_MS = 5_000;

function invalidState(reason: string): InvalidRequest {
  return new InvalidRequest(
    'invalid_state',
    'the authorization this callback finishes is unknown, used or expired',
    { field: 'query.state', reason },
  );
}

/** The connection commands that drive its OAuth authorization. */
export class ConnectionAuthorization {
  readonly #deps: ConnectionEffectDeps;
  readonly #connections: ConnectionService;

  constructor(deps: ConnectionEffectDeps, connections: ConnectionService) {
    this.#deps = deps;
    this.#connections = connections;
  }

  /**
   * `POST /connections/{id}/authorize` (row 43): a fresh URL. A linked connection stays
   * linked on its tokens until the new authorization replaces them.
   * @throws Conflict `not_oauth` for a connection that does not link through OAuth.
   */
  async authorize(ref: ConnectionRef): Promise<{ authorize: string }> {
    const stored = await this.#connections.require(ref);
    if (stored.value.auth.kind !== 'oauth') {
      throw new Conflict(
        'not_oauth',
        `connection ${ref.connection} does not link through OAuth; put it without a credential to authorize it`,
      );
    }
    const value = await this.#connections.apply(ref, stored, { type: 'authorize.requested' });
    if (value?.authorize == null) {
      throw new Conflict(
        'authorization_not_needed',
        `the server of connection ${ref.connection} no longer demands authorization; it is linked`,
      );
    }
    return { authorize: value.authorize };
  }

  /**
   * `GET /connections/callback` (3.3 row 3, row 45): answers where to send the browser.
   * `ownersBrowser` says whether the request came from the browser the authorization was
   * started in; a handle checked first, then the browser, so a stranger learns nothing.
   * @throws InvalidRequest `invalid_state` when the handle is unknown, used or expired, or
   *   its connection is gone or now points at another endpoint.
   * @throws Forbidden `browser_mismatch` when another browser brings a good handle; the
   *   handle stays unused for the owner's.
   */
  async callback(query: CallbackQuery, ownersBrowser: (state: string) => boolean): Promise<string> {
    const { state, code, error } = query;
    if (state === undefined) throw invalidState('is required');
    if (code === undefined && error === undefined) {
      throw new InvalidRequest('invalid_request', 'the callback carries neither code nor error', {
        field: 'query.code',
        reason: 'code or error is required',
      });
    }
    const { oauth, clock } = this.#deps;
    const pending = await oauth.peekPending(state);
    if (pending === undefined) throw invalidState('unknown or used');
    if (pending.expires <= clock.now()) {
      await oauth.takePending(state);
      throw invalidState('expired');
    }
    if (!ownersBrowser(state)) {
      throw new Forbidden(
        'browser_mismatch',
        'this authorization was started in another browser; open its link in the browser that asked for it',
        { field: 'query.state', reason: 'was started in another browser' },
      );
    }
    const ref = { tenant: pending.tenant, connection: pending.connection };
    const stored = await this.#connections.read(ref);
    const current = stored !== null && stored.value.endpoint === pending.endpoint;
    if (error !== undefined || !current || code === undefined) {
      // Used up either way: a refusal is answered once, a stale link not at all.
      if ((await oauth.takePending(state)) === undefined) throw invalidState('used');
      if (!current) throw invalidState('its connection is gone or moved to another endpoint');
      // RFC 6749 §4.1.2.1: the owner said no; the connection stays as it is.
      await this.#connections.apply(ref, stored, { type: 'callback.refused', error: error ?? '' });
      return withParams(pending.returnTo, { error: error ?? 'access_denied' });
    }
    try {
      await this.#connections.apply(ref, stored, { type: 'callback.received', code, state });
    } catch (failure) {
      // The handle is spent; the browser goes back with the reason (the log has the rest).
      if (failure instanceof UpstreamFailure) {
        return withParams(pending.returnTo, { error: failure.code });
      }
      throw failure;
    }
    return pending.returnTo;
  }

  /**
   * 3.3 row 5 on a read: a linked OAuth connection whose tokens the server refuses and
   * that cannot be refreshed reads as `authorizing`, at a freshly minted URL. Any other
   * failure leaves the connection as kept: a read never fails on the server (§7).
   */
  async check(ref: ConnectionRef, stored: Versioned<ConnectionValue>): Promise<ConnectionValue> {
    const { value } = stored;
    if (value.state !== 'linked' || value.auth.kind !== 'oauth') return value;
    const { access, authorizeUrl } = this.#oauthAccess(ref, value);
    try {
      // `initialize` alone shows whether the tokens open the server.
      await withMcpSession(
        { ...access, timeoutMs: Math.min(access.timeoutMs, CHECK_TIMEOUT_MS) },
        () => Promise.resolve(),
      );
      return value;
    } catch (failure) {
      const authorize = authorizeUrl();
      if (!(failure instanceof AuthorizationRequired) || authorize === undefined) return value;
      return (await this.refused(ref, stored, authorize)) ?? value;
    }
  }

  /**
   * 3.3 row 5 for any caller whose discovery or call hit `AuthorizationRequired` with a
   * fresh URL (session start, tool calls): the connection reads as `authorizing`.
   */
  async refused(
    ref: ConnectionRef,
    stored: Versioned<ConnectionValue>,
    authorize: string,
  ): Promise<ConnectionValue | null> {
    try {
      return await this.#connections.apply(ref, stored, { type: 'token.refused', authorize });
    } catch (failure) {
      // Someone moved the connection on meanwhile; theirs is the newer word.
      if (failure instanceof Conflict && failure.code === 'version_conflict') {
        return (await this.#connections.read(ref))?.value ?? null;
      }
      throw failure;
    }
  }

  /** How the service reaches a linked OAuth connection, and the URL its provider minted. */
  #oauthAccess(ref: ConnectionRef, value: ConnectionValue) {
    const config = contextOf(value, this.#deps.baseUrl).config;
    if (config === null) throw new Error('a stored connection has a config');
    const provider = connectionProvider(linkContext(this.#deps, config), {
      ...ref,
      endpoint: config.endpoint,
      returnTo: config.return_to,
    });
    const access: McpAccess = {
      endpoint: config.endpoint,
      authProvider: provider,
      timeoutMs: timeoutMs(config.timeout),
      egress: this.#deps.egress,
    };
    return { access, authorizeUrl: () => provider.authorizeUrl?.href };
  }
}
