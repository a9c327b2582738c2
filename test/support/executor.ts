/**
 * A vendor's executor as it works over the API (decisions rows 57, 62, 65): a key pair
 * whose public half the install registers at `POST /sessions`, the signed assertion it
 * exchanges for its session token, its claim of a call and its completion under the grant.
 */
import { randomUUID } from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import type { PublicFlow } from './flow.ts';

/** An executor: its name (`executor:<name>` is its producer) and key pair. */
export interface Executor {
  readonly name: string;
  readonly privateKey: CryptoKey;
  readonly publicPem: string;
}

/** A fresh Ed25519 executor named `name`. */
export async function newExecutor(name: string): Promise<Executor> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return { name, privateKey, publicPem: await exportSPKI(publicKey) };
}

/** The `executor` of a `POST /sessions` body. */
export function executorSpec(executor: Executor): { name: string; public_key: string } {
  return { name: executor.name, public_key: executor.publicPem };
}

/** Row 65: the assertion an executor signs for the token endpoint `audience`. */
export function assertion(
  executor: Executor,
  audience: string,
  jti = randomUUID(),
): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer(executor.name)
    .setAudience(audience)
    .setExpirationTime('2m')
    .setJti(jti)
    .sign(executor.privateKey);
}

/** The executor's session token (`GET /sessions/{id}/executor/token`, row 65). */
export async function executorToken(
  flow: PublicFlow,
  baseUrl: string,
  executor: Executor,
  session: string,
): Promise<string> {
  const path = `/sessions/${session}/executor/token`;
  const signed = await assertion(executor, `${baseUrl}${path}`);
  const answer = await flow.expect(200, 'GET', path, signed);
  return (answer as { token: string }).token;
}

/**
 * Claims the call at `cause` and completes it with `result` under the grant (2.17, 4.2);
 * answers the grant's completion envelopes.
 */
export async function performCall(
  flow: PublicFlow,
  session: string,
  token: string,
  cause: number,
  result: unknown,
): Promise<unknown> {
  const claim = await flow.expect(200, 'POST', `/sessions/${session}/executor/claim`, token, {
    cause,
  });
  const grant = (claim as { credential: string }).credential;
  return flow.expect(200, 'POST', `/sessions/${session}/events`, grant, [
    { kind: { name: 'invoke.completed', version: 1 }, body: { ok: true, result, error: null } },
  ]);
}
