/**
 * An executor's session token (decisions row 65): it signs an assertion with its Ed25519
 * key (`iss` its name, `aud` the token endpoint's URL under the service's `BASE_URL`,
 * `exp` two minutes ahead, a fresh `jti`) and exchanges it at
 * `GET /sessions/{id}/executor/token`. The token is renewed a minute before it lapses, or
 * at once after `renew()` (the service refused it, or a tail said it expired).
 */
import { bearer, bodyOf, type Client } from '../client.ts';
import { signJwt, type CryptoKey } from './jws.ts';

const RENEW_MARGIN_MS = 60_000;
const ASSERTION_SECONDS = 120;

export interface ExecutorIdentity {
  /** The session the executor serves. */
  readonly session: string;
  /** The name registered at `POST /sessions`; its records say `executor:<name>`. */
  readonly name: string;
  /** The Ed25519 private key whose public half was registered with the name. */
  readonly key: CryptoKey;
  /** The service's `BASE_URL` when it differs from the address the client connects to. */
  readonly audienceBase?: string;
}

export class ExecutorToken {
  readonly #client: Client;
  readonly #identity: ExecutorIdentity;
  #current: { readonly token: string; readonly expires: number } | null = null;

  constructor(client: Client, identity: ExecutorIdentity) {
    this.#client = client;
    this.#identity = identity;
  }

  /** A token good for a minute more at least, exchanged afresh when needed. */
  async get(): Promise<string> {
    if (this.#current === null || this.#current.expires - Date.now() < RENEW_MARGIN_MS) {
      this.#current = await this.#exchange();
    }
    return this.#current.token;
  }

  /** Forgets the token: the next `get` exchanges a new one. */
  renew(): void {
    this.#current = null;
  }

  async #exchange(): Promise<{ token: string; expires: number }> {
    const { session, name, key } = this.#identity;
    const base = (this.#identity.audienceBase ?? this.#client.options.baseUrl).replace(/\/+$/, '');
    const now = Math.floor(Date.now() / 1000);
    const assertion = await signJwt(key, {
      iss: name,
      aud: `${base}/sessions/${session}/executor/token`,
      iat: now,
      exp: now + ASSERTION_SECONDS,
      jti: globalThis.crypto.randomUUID(),
    });
    return bodyOf(
      this.#client.api.GET('/sessions/{id}/executor/token', {
        params: { path: { id: session } },
        headers: bearer(assertion),
      }),
    );
  }
}
