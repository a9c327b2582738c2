/* The sign-in of the service's pages (the consent page and the console): plain browser
 * JavaScript, no build step. It also loads the service's typed client for a page that
 * names where it is served (`paths.client`), through which that page makes its calls. A user gets a console token from `POST /console/token` in one
 * of two ways, as the service offers them in the page's `page-config` data:
 * - OpenID Connect (`CONSOLE_OIDC_ISSUER`): authorization code with PKCE (RFC 7636) and a
 *   nonce, through oauth4webapi, which the service serves from its own origin and this
 *   script imports only when it is used. The provider sends the browser back to the page's
 *   redirect address; the code is exchanged there for an ID token, and the ID token for
 *   a console token of the tenant the user named;
 * - the operator grant (the embedded default): the operator token, pasted, with a user and
 *   a tenant.
 * Nothing here keeps a token beyond this tab's sessionStorage. */
/* global document, location, history, sessionStorage, fetch, URL, atob */
'use strict';

// A top-level binding of a classic script: the page script (consent.js, console.js) reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const PageSignIn = (() => {
  const config = JSON.parse(document.getElementById('page-config').textContent);
  /** Where this page's token exchange, OpenID Connect client and redirect URI are, relative to it. */
  const at = (name) => new URL(config.paths[name], location.href);
  /** What a started OpenID Connect sign-in needs when the browser comes back. */
  const PENDING = 'pageSignIn';

  let loaded = null;

  /**
   * The service's typed client (the `@agent-session-service/client` package, which the
   * service serves from this origin at the page's `paths.client`, the import map in the
   * page naming its `openapi-fetch`): imported when the page first calls, then kept. Every
   * refusal it answers throws its `ServiceProblem` (`status`, `code`, `message`, `body`).
   */
  function service() {
    loaded ??= import(at('client').href).then((client) =>
      client.createClient({
        // The service's root: the token exchange's path is `<root>/console/token`.
        baseUrl: new URL('..', at('token')).href,
        // No cached answer, no cookie: every call carries its bearer token and nothing else,
        // but for one that asks for cookies (`credentials: 'include'`, this origin only):
        // a connection's authorization, which the service binds to this browser by one.
        fetch: (request) =>
          fetch(request, {
            cache: 'no-store',
            credentials: request.credentials === 'include' ? 'same-origin' : 'omit',
          }),
      }),
    );
    loaded.catch(() => {
      loaded = null;
    });
    return loaded;
  }

  /** `POST /console/token`; answers the console token or throws with the service's words. */
  async function exchange(body, bearer) {
    const headers = { accept: 'application/json', 'content-type': 'application/json' };
    if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    const response = await fetch(at('token'), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
    const data = await response.json().catch(() => null);
    if (response.status !== 200) {
      const error = new Error(
        data?.message ?? `The service refused the sign-in (${response.status}).`,
      );
      // The problem's field and status, so a page can show the error beside its cause.
      error.field = data?.field ?? null;
      error.status = response.status;
      throw error;
    }
    return data.token;
  }

  /** The operator grant: a console token for `user` on `tenant`. */
  function operator(tenant, user, operatorToken) {
    return exchange({ user, tenant }, operatorToken);
  }

  /** Where the provider sends the browser back: one fixed address per page. */
  const redirectUri = () => at('redirect').href;

  /** oauth4webapi and the provider's metadata (OpenID Connect Discovery). */
  async function provider() {
    const oauth = await import(at('oauth').href);
    const issuer = new URL(config.oidc.issuer);
    // An http issuer is one the operator configured so (a local provider): allowed as such.
    const options = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options });
    const as = await oauth.processDiscoveryResponse(issuer, response);
    return { oauth, as, options, client: { client_id: config.oidc.clientId } };
  }

  /** Another tenant's console token for the ID token a sign-in answered (kept in memory only). */
  function reexchange(idToken, tenant) {
    return exchange({ subject_token: idToken, tenant });
  }

  /** Sends the browser to the provider; `request` is where to come back to. */
  async function startOidc(tenant, request) {
    const { oauth, as } = await provider();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, nonce, tenant, request }));
    const url = new URL(as.authorization_endpoint);
    url.searchParams.set('client_id', config.oidc.clientId);
    url.searchParams.set('redirect_uri', redirectUri());
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', 'openid');
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    url.searchParams.set('nonce', nonce);
    location.assign(url.href);
  }

  /**
   * Back at the redirect address: checks the provider's answer against the sign-in this tab
   * started, exchanges the code, then the ID token; answers the console token and the
   * request to return to.
   */
  async function finishOidc() {
    const answer = new URL(location.href);
    // The code is single use, but it has no business staying in the address or history.
    history.replaceState(null, '', answer.pathname);
    const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null');
    sessionStorage.removeItem(PENDING);
    if (pending === null) throw new Error('no sign-in was started in this tab');
    const { oauth, as, options, client } = await provider();
    const params = oauth.validateAuthResponse(as, client, answer, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirectUri(),
      pending.verifier,
      options,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    const token = await exchange({ subject_token: result.id_token, tenant: pending.tenant });
    return { token, request: pending.request, idToken: result.id_token };
  }

  /** The user and tenant a console token names, for display only (the service checks it). */
  function who(token) {
    try {
      const part = token.split('.')[1].replaceAll('-', '+').replaceAll('_', '/');
      const claims = JSON.parse(atob(part));
      return { user: String(claims.sub).replace(/^console:/, ''), tenant: String(claims.tid) };
    } catch {
      return null;
    }
  }

  return { config, service, operator, reexchange, startOidc, finishOidc, who };
})();
