/**
 * Step 1: the executor's session token. It signs an assertion with its private key
 * (decisions row 65: `iss` its name, `aud` the token endpoint's URL under `BASE_URL`,
 * `exp` at most five minutes ahead, a fresh `jti`) and exchanges it at
 * `GET /sessions/{id}/executor/token` for `{session, token, expires}`. The token reads
 * the executor's face and claims; it is renewed a minute before it lapses, or at once
 * when the service refuses it.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, type CryptoKey } from 'jose';
import { callService, sessionPath, type Settings } from './service.ts';

/** Renew this long before the token's `expires`. */
const RENEW_MARGIN_MS = 60_000;

export class ExecutorToken {
  readonly #settings: Settings;
  readonly #key: CryptoKey;
  #current: { readonly token: string; readonly expires: number } | null = null;

  constructor(settings: Settings, key: CryptoKey) {
    this.#settings = settings;
    this.#key = key;
  }

  /** A token good for at least a minute more, exchanged afresh when needed. */
  async get(): Promise<string> {
    if (this.#current === null || this.#current.expires - Date.now() < RENEW_MARGIN_MS) {
      this.#current = await this.#exchange();
    }
    return this.#current.token;
  }

  /** Forgets the token (the service refused it, or the tail said it expired). */
  renew(): void {
    this.#current = null;
  }

  async #exchange(): Promise<{ token: string; expires: number }> {
    const path = sessionPath(this.#settings, '/executor/token');
    // Row 65: aud is the endpoint under BASE_URL, whatever address we connect to.
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer(this.#settings.name)
      .setAudience(`${this.#settings.baseUrl}${path}`)
      .setIssuedAt()
      .setExpirationTime('2m')
      .setJti(randomUUID())
      .sign(this.#key);
    const answer = await callService(this.#settings, 'GET', path, assertion);
    if (answer.status !== 200) {
      throw new Error(
        `the token exchange answered ${answer.status}: ${JSON.stringify(answer.body)}`,
      );
    }
    return answer.body as { token: string; expires: number };
  }
}
