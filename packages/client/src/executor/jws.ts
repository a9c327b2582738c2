/**
 * The two compact JWS an executor handles, with Web Crypto's Ed25519 alone (browsers and
 * Node 24): the assertion it signs to mint its token (decisions row 65) and the gates it
 * verifies against the service's `GET /.well-known/jwks.json`.
 */
import type { Client } from '../client.ts';
import { bodyOf } from '../client.ts';

const encoder = new TextEncoder();

/** Web Crypto's key type, whichever library (DOM or Node's) declares it. */
export type CryptoKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

const part = (value: unknown): string => base64url(encoder.encode(JSON.stringify(value)));

/** A compact EdDSA JWS of `claims` signed with the Ed25519 private `key`. */
export async function signJwt(key: CryptoKey, claims: Record<string, unknown>): Promise<string> {
  const input = `${part({ alg: 'EdDSA', typ: 'JWT' })}.${part(claims)}`;
  const signature = await globalThis.crypto.subtle.sign('Ed25519', key, encoder.encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

/** A key of the set (OKP, Ed25519). */
interface PublicJwk {
  readonly kty: string;
  readonly crv: string;
  readonly x: string;
  readonly kid: string;
}

/** The service's signing keys by `kid`, fetched once and again for an unknown `kid`. */
export class ServiceKeys {
  readonly #client: Client;
  #keys = new Map<string, Promise<CryptoKey>>();
  #fetched: Promise<void> | undefined;

  constructor(client: Client) {
    this.#client = client;
  }

  async #refresh(): Promise<void> {
    const set = await bodyOf(this.#client.api.GET('/.well-known/jwks.json'));
    for (const jwk of set.keys as readonly PublicJwk[]) {
      if (this.#keys.has(jwk.kid)) continue;
      const material = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
      const imported = globalThis.crypto.subtle.importKey('jwk', material, 'Ed25519', false, [
        'verify',
      ]);
      this.#keys.set(jwk.kid, imported);
    }
  }

  /** The key named `kid`; throws when the service has none by that name. */
  async get(kid: string): Promise<CryptoKey> {
    this.#fetched ??= this.#refresh();
    await this.#fetched;
    if (!this.#keys.has(kid)) {
      this.#fetched = this.#refresh();
      await this.#fetched;
    }
    const key = this.#keys.get(kid);
    if (key === undefined) throw new Error(`the service has no key ${kid}`);
    return key;
  }
}

/**
 * The claims of a compact JWS of type `typ`, signed EdDSA by one of `keys` and not
 * expired; throws otherwise.
 */
export async function verifyJws(
  jws: string,
  keys: ServiceKeys,
  typ: string,
  now = Date.now(),
): Promise<Record<string, unknown>> {
  const [header, payload, signature, ...rest] = jws.split('.');
  if (header === undefined || payload === undefined || signature === undefined || rest.length)
    throw new Error('not a compact JWS');
  const protectedHeader = JSON.parse(new TextDecoder().decode(fromBase64url(header))) as {
    alg?: unknown;
    typ?: unknown;
    kid?: unknown;
  };
  if (protectedHeader.alg !== 'EdDSA') throw new Error('the JWS is not EdDSA');
  if (protectedHeader.typ !== typ) throw new Error(`the JWS is not a ${typ}`);
  if (typeof protectedHeader.kid !== 'string') throw new Error('the JWS names no key');
  const key = await keys.get(protectedHeader.kid);
  const ok = await globalThis.crypto.subtle.verify(
    'Ed25519',
    key,
    fromBase64url(signature),
    encoder.encode(`${header}.${payload}`),
  );
  if (!ok) throw new Error('the JWS signature does not verify');
  const claims = JSON.parse(new TextDecoder().decode(fromBase64url(payload))) as Record<
    string,
    unknown
  >;
  if (typeof claims.exp === 'number' && claims.exp * 1000 <= now)
    throw new Error('the JWS expired');
  return claims;
}
