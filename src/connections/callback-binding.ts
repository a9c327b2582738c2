/**
 * Binding an OAuth authorization to the owner's browser. The `state` a
 * connection's authorization URL carries is single use and names one tenant's connection
 * (decisions row 45), but whoever holds the URL could open it: a forwarded or stolen link
 * would attach the account of whoever signs in at the authorization server to the
 * owner's connection, or an owner could have someone else's account attached to theirs.
 *
 * So the answer that hands the owner an authorization URL (`PUT /connections/{id}`,
 * `POST /connections/{id}/authorize`) also sets a short-lived cookie on the browser that
 * made the request, named after the state and holding an HMAC of it under a key only the
 * service holds; the callback finishes (or declines) the authorization only when the
 * browser arriving there presents it. Nothing is stored: the state itself is the message.
 *
 * The cookie is `HttpOnly`, `SameSite=Lax` (sent on the authorization server's top-level
 * redirect back, never on a cross-site subrequest), `Secure` under an https `BASE_URL`,
 * scoped to the callback's path and lives as long as the authorization URL.
 */
import { createHmac, hash, hkdfSync, timingSafeEqual } from 'node:crypto';
import { CALLBACK_PATH } from '../mcp/oauth-provider.ts';
import { AUTHORIZATION_TTL_MS } from '../mcp/oauth.ts';

/** The HKDF label of the binding key: a new scheme gets a new label. */
const PURPOSE = 'connections/callback-browser/v1';

/** The cookie that binds the authorization under `state` to one browser. */
export interface BindingCookie {
  readonly name: string;
  readonly value: string;
}

/** Cookies of a `Cookie` request header, by name (the first of a repeated name wins). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(at + 1).trim());
  }
  return cookies;
}

/** Mints and checks the browser binding of connection authorizations. */
export class CallbackBinding {
  readonly #key: Buffer;
  readonly #secure: boolean;
  readonly #path: string;

  /**
   * @param root the service's 32-byte root key (`ServicesDeps.sealKey`)
   * @param baseUrl `BASE_URL`, whose scheme and path the cookie follows
   */
  constructor(root: Buffer, baseUrl: string) {
    this.#key = Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), PURPOSE, 32));
    const base = new URL(baseUrl);
    this.#secure = base.protocol === 'https:';
    this.#path = `${base.pathname.replace(/\/+$/, '')}${CALLBACK_PATH}`;
  }

  /** The cookie of the authorization under `state`. */
  cookieOf(state: string): BindingCookie {
    // The name never shows the state; `__Secure-` keeps an http page from setting it.
    const tag = hash('sha256', state, 'hex').slice(0, 16);
    const name = `${this.#secure ? '__Secure-' : ''}connection_oauth_${tag}`;
    const value = createHmac('sha256', this.#key).update(state).digest('base64url');
    return { name, value };
  }

  /** The `Set-Cookie` value that binds the authorization at `authorizeUrl`, or null if it has no state. */
  setCookieFor(authorizeUrl: string): string | null {
    const state = URL.canParse(authorizeUrl)
      ? new URL(authorizeUrl).searchParams.get('state')
      : null;
    if (state === null || state === '') return null;
    const { name, value } = this.cookieOf(state);
    return this.#attributes(`${name}=${value}`, Math.floor(AUTHORIZATION_TTL_MS / 1000));
  }

  /** The `Set-Cookie` value that drops the binding of `state` once the callback used it. */
  clearCookieFor(state: string): string {
    return this.#attributes(`${this.cookieOf(state).name}=`, 0);
  }

  /** True when the request's `Cookie` header carries the binding of `state`. */
  presentedWith(state: string, cookieHeader: string | undefined): boolean {
    const { name, value } = this.cookieOf(state);
    const presented = parseCookies(cookieHeader).get(name);
    if (presented === undefined) return false;
    const [a, b] = [Buffer.from(presented), Buffer.from(value)];
    return a.length === b.length && timingSafeEqual(a, b);
  }

  #attributes(pair: string, maxAge: number): string {
    const secure = this.#secure ? '; Secure' : '';
    return `${pair}; Path=${this.#path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
  }
}
