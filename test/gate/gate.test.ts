import { createHash, randomBytes, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SigningKey } from '../../src/auth/key-material.ts';
import { argsDigest, gateClaims, signGate, verifyGate } from '../../src/gate/gate.ts';
import { compilePolicies } from '../../src/policy/compile.ts';
import { evaluateCall } from '../../src/policy/evaluate.ts';
import { Unauthenticated } from '../../src/errors.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let harness: TestApp;
let origin: string;
let served: JSONWebKeySet;

beforeAll(async () => {
  harness = await startTestApp();
  origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  const response = await fetch(`${origin}/.well-known/jwks.json`);
  served = (await response.json()) as JSONWebKeySet;
});
afterAll(async () => {
  await harness.close();
});

const NOW = Date.UTC(2026, 2, 1, 12, 0, 0);

/** A restrictive `lookup_order` policy (`amount lt 100`) and an allowed call of it. */
function allowedCall() {
  const plan = compilePolicies(
    [
      {
        tool: 'lookup_order',
        posture: 'restrictive',
        items: [
          { arg: 'region', effect: 'deny', op: 'is', operand: { value: 'embargoed' } },
          { arg: 'amount', effect: 'allow', op: 'lt', operand: { value: 100 } },
        ],
        project: ['order_id'],
      },
    ],
    [
      {
        name: 'lookup_order',
        source: 'vendor',
        inputSchema: {
          type: 'object',
          properties: {
            order_id: { type: 'string' },
            amount: { type: 'number' },
            region: { type: 'string' },
          },
        },
      },
    ],
  );
  const args = { order_id: `A-${randomUUID()}`, amount: 50 };
  const decision = evaluateCall(plan, 'lookup_order', args);
  if (!decision.allowed) throw new Error('the fixture call must be allowed');
  const claims = gateClaims({
    sid: randomBytes(36).toString('hex'),
    cause: 7,
    call: `toolu_${randomUUID()}`,
    tool: 'lookup_order',
    args,
    policy: plan.digest,
    items: decision.matched,
  });
  return { plan, args, claims };
}

/** The service's own signing key, the one the served JWKS publishes. */
const serviceKey = (): SigningKey => harness.deps.tokens.signingKey;

async function foreignKey(kid: string): Promise<SigningKey> {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return { ...pair, kid };
}

/** `gate` with its payload replaced by `claims` and the original signature kept. */
function withPayload(gate: string, claims: Record<string, unknown>): string {
  const [header, , signature] = gate.split('.');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${header ?? ''}.${payload}.${signature ?? ''}`;
}

describe('a gate', () => {
  it('verifies with the key fetched from GET /.well-known/jwks.json and says exactly what was allowed', async () => {
    const { plan, args, claims } = allowedCall();
    const gate = await signGate(serviceKey(), claims, NOW);

    expect(decodeProtectedHeader(gate)).toEqual({
      alg: 'EdDSA',
      kid: serviceKey().kid,
      typ: 'gate+jwt',
    });
    const jwks = createRemoteJWKSet(new URL(`${origin}/.well-known/jwks.json`));
    const verified = await verifyGate(jwks, gate, {
      sid: claims.sid,
      cause: 7,
      call: claims.call,
      tool: 'lookup_order',
      args: { amount: 50, order_id: args.order_id },
    });
    expect(verified).toEqual({ valid: true, claims, issuedAt: NOW });
    expect(claims).toEqual({
      sid: claims.sid,
      cause: 7,
      call: claims.call,
      tool: 'lookup_order',
      args_digest: argsDigest(args),
      policy: `sha256:${plan.digest}`,
      items: [1],
    });

    // Plain jose, as docs/architecture.md shows it, reads the same claims.
    const { payload } = await jwtVerify(gate, jwks, { typ: 'gate+jwt', algorithms: ['EdDSA'] });
    expect(payload).toEqual({ ...claims, iat: NOW / 1000 });
  });

  it('passes the check docs/architecture.md shows an executor, and fails it for other arguments', async () => {
    const { args, claims } = allowedCall();
    const gate = await signGate(serviceKey(), claims, NOW);
    const jwks = createRemoteJWKSet(new URL(`${origin}/.well-known/jwks.json`));
    // The documented check, as written there.
    async function checkGate(
      sid: string,
      allowed: { cause: number; call: string; tool: string; args: unknown; gate: string },
    ) {
      const { payload } = await jwtVerify(allowed.gate, jwks, {
        typ: 'gate+jwt',
        algorithms: ['EdDSA'],
      });
      const digest = `sha256:${createHash('sha256')
        .update(canonicalize(allowed.args) ?? 'null')
        .digest('hex')}`;
      const ours = {
        sid,
        cause: allowed.cause,
        call: allowed.call,
        tool: allowed.tool,
        args_digest: digest,
      };
      for (const [claim, value] of Object.entries(ours)) {
        if (payload[claim] !== value) throw new Error(`the gate's ${claim} is not this call's`);
      }
    }
    const allowed = { cause: 7, call: claims.call, tool: 'lookup_order', args, gate };
    await expect(checkGate(claims.sid, allowed)).resolves.toBeUndefined();
    await expect(
      checkGate(claims.sid, { ...allowed, args: { ...args, amount: 500 } }),
    ).rejects.toThrow("the gate's args_digest is not this call's");
  });

  it('digests the arguments as plain SHA-256 of their RFC 8785 form, whatever the key order', () => {
    const args = { b: [1, { y: 2, x: 'é' }], a: null };
    const text = canonicalize(args) ?? 'null';
    expect(argsDigest(args)).toBe(`sha256:${createHash('sha256').update(text).digest('hex')}`);
    expect(argsDigest({ a: null, b: [1, { x: 'é', y: 2 }] })).toBe(argsDigest(args));
  });

  it('is refused for arguments other than the call’s', async () => {
    const { args, claims } = allowedCall();
    const gate = await signGate(serviceKey(), claims, NOW);
    const verified = await verifyGate(served, gate, { args: { ...args, amount: 500 } });
    expect(verified).toMatchObject({ valid: false, reason: 'mismatch', field: 'args_digest' });
  });

  it('is refused for another session, call or set of items', async () => {
    const { claims } = allowedCall();
    const gate = await signGate(serviceKey(), claims, NOW);
    const other = randomBytes(36).toString('hex');
    expect(await verifyGate(served, gate, { sid: other })).toMatchObject({ field: 'sid' });
    expect(await verifyGate(served, gate, { call: 'toolu_other' })).toMatchObject({
      field: 'call',
    });
    expect(await verifyGate(served, gate, { items: [0, 1] })).toMatchObject({ field: 'items' });
    expect(await verifyGate(served, gate, { items: [1] })).toMatchObject({ valid: true });
  });

  it('does not verify once its args digest is tampered with', async () => {
    const { claims } = allowedCall();
    const gate = await signGate(serviceKey(), claims, NOW);
    const forged = withPayload(gate, {
      ...claims,
      args_digest: argsDigest({ order_id: 'A-1', amount: 500 }),
      iat: NOW / 1000,
    });
    expect(await verifyGate(served, forged)).toMatchObject({ valid: false, reason: 'signature' });
    await expect(
      jwtVerify(forged, createLocalJWKSet(served), { typ: 'gate+jwt' }),
    ).rejects.toThrow();
  });

  it('does not verify when signed with a foreign key', async () => {
    const { claims } = allowedCall();
    // A key of its own id: no key of the set matches.
    const stranger = await signGate(await foreignKey('stranger'), claims, NOW);
    expect(await verifyGate(served, stranger)).toMatchObject({
      valid: false,
      reason: 'unknown_key',
    });
    // A key posing under the service's kid: the signature fails.
    const impostor = await signGate(await foreignKey(serviceKey().kid), claims, NOW);
    expect(await verifyGate(served, impostor)).toMatchObject({
      valid: false,
      reason: 'signature',
    });
    expect(await verifyGate(serviceKey().publicKey, impostor)).toMatchObject({
      valid: false,
      reason: 'signature',
    });
  });

  it('is not a token, and a token is not a gate', async () => {
    const { claims } = allowedCall();
    const gate = await signGate(serviceKey(), claims, NOW);
    await expect(harness.deps.tokens.verify(gate, 'session')).rejects.toBeInstanceOf(
      Unauthenticated,
    );
    const token = await harness.deps.tokens.mint('session', { sub: 'principal:alice' }, 60_000);
    expect(await verifyGate(served, token.token)).toMatchObject({
      valid: false,
      reason: 'malformed',
    });
    // Signed by the service with the gate's type, over claims that are not a gate's.
    const incomplete = await new SignJWT({ sid: claims.sid, call: claims.call })
      .setProtectedHeader({ alg: 'EdDSA', kid: serviceKey().kid, typ: 'gate+jwt' })
      .sign(serviceKey().privateKey);
    expect(await verifyGate(served, incomplete)).toMatchObject({
      valid: false,
      reason: 'malformed',
    });
    expect(await verifyGate(served, 'not.a.gate')).toMatchObject({
      valid: false,
      reason: 'malformed',
    });
  });
});
