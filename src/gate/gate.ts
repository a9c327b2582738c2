/**
 * The gate (decisions part B): a compact JWS the service signs over one
 * allowed call and puts in its `invoke.allowed`, so the executor can check offline, with
 * the service's public keys (GET /.well-known/jwks.json), that this exact call was
 * allowed: this session, this call of this model output, this tool, these arguments,
 * under this policy plan and these allow items.
 *
 * It is signed with the service's token key under the key's `kid`, with `typ: gate+jwt`
 * (explicit typing, RFC 8725 §3.11), so a gate is never accepted as a token (it has no
 * `aud`, `sub` or `exp`) and a token never as a gate. It does not expire: it states a
 * decision that was taken; the call's deadline and its grant bound what can be done.
 *
 * `verifyGate` is what an executor does, for tests and for the documentation
 * (docs/architecture.md, "Verifying a gate"); the service itself never verifies a gate.
 */
import {
  SignJWT,
  createLocalJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  type KeyObject,
  type CryptoKey,
} from 'jose';
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { SIGNING_ALG, type SigningKey } from '../auth/key-material.ts';

/** The gate's `typ` header: a JWT of its own type, not a token. */
export const GATE_TYPE = 'gate+jwt';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The claims of a gate besides `iat`: exactly what was allowed. */
export const GateClaims = z.object({
  /** The session id (2.1, 72 hex). */
  sid: z.string().min(1),
  /** The `model.output` that made the call: the `cause` of the `invoke.allowed` body. */
  cause: z.int().min(1),
  /** The call id the model gave the tool call. */
  call: z.string().min(1),
  /** The model-visible tool name. */
  tool: z.string().min(1),
  /** `sha256:<hex>` of the RFC 8785 form of the call's arguments (`argsDigest`). */
  args_digest: z.string().regex(DIGEST),
  /** `sha256:<hex>`: the digest of the policy plan the session pinned (`PolicyPlan.digest`). */
  policy: z.string().regex(DIGEST),
  /** Indexes of the tool policy's allow items the call met, ascending; empty when none bind. */
  items: z.array(z.int().min(0)),
});
export type GateClaims = z.infer<typeof GateClaims>;

const GatePayload = GateClaims.extend({ iat: z.int().min(0) });

/** What the authorizer knows about an allowed call. */
export interface GateInput {
  readonly sid: string;
  readonly cause: number;
  readonly call: string;
  readonly tool: string;
  /** The call's arguments in plain text, as the model gave them. */
  readonly args: unknown;
  /** `PolicyPlan.digest`: 64 lowercase hex. */
  readonly policy: string;
  /** `Allowed.matched` of the policy's decision. */
  readonly items: readonly number[];
}

/**
 * `sha256:<hex>` of the RFC 8785 form of `args`, which an executor computes from the plain
 * arguments it is shown. A plain hash is fine here: only the executor, which holds the
 * plaintext, is shown a gate (the opened audit strips it); the public faces show the
 * arguments' keyed digest instead (`src/sessions/sealing.ts`).
 */
export function argsDigest(args: unknown): string {
  return `sha256:${hash('sha256', canonicalize(args) ?? 'null', 'hex')}`;
}

/** The claims of the gate of an allowed call. */
export function gateClaims(input: GateInput): GateClaims {
  return {
    sid: input.sid,
    cause: input.cause,
    call: input.call,
    tool: input.tool,
    args_digest: argsDigest(input.args),
    policy: `sha256:${input.policy}`,
    items: [...input.items].sort((a, b) => a - b),
  };
}

/**
 * Signs a gate: a compact JWS with header `{alg: "EdDSA", kid, typ: "gate+jwt"}` over
 * `claims` and `iat` (seconds of `now`, which is ms from the caller's injected clock).
 */
export async function signGate(key: SigningKey, claims: GateClaims, now: number): Promise<string> {
  return new SignJWT({ ...GateClaims.parse(claims) })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: GATE_TYPE })
    .setIssuedAt(Math.floor(now / 1000))
    .sign(key.privateKey);
}

/** What a gate is checked with: a public key, a JWKS document, or a remote JWKS. */
export type GateKey = CryptoKey | KeyObject | JSONWebKeySet | JWTVerifyGetKey;

/** What the executor expects the gate to say: the call as its face shows it. */
export interface GateExpectation {
  readonly sid?: string;
  readonly cause?: number;
  readonly call?: string;
  readonly tool?: string;
  /** The plain arguments of the call; compared by their digest. */
  readonly args?: unknown;
  readonly policy?: string;
  readonly items?: readonly number[];
}

/** Why a gate was refused. */
export type GateFailure =
  /** Not a compact JWS of type `gate+jwt` signed with EdDSA, or its claims are not a gate's. */
  | 'malformed'
  /** No key of the set has the gate's `kid`. */
  | 'unknown_key'
  /** The signature does not verify with the key. */
  | 'signature'
  /** It verifies, but says something else than expected (`field`). */
  | 'mismatch';

/** The outcome of `verifyGate`. */
export type GateVerification =
  | {
      readonly valid: true;
      readonly claims: GateClaims;
      /** When it was signed, ms. */
      readonly issuedAt: number;
    }
  | {
      readonly valid: false;
      readonly reason: GateFailure;
      /** The claim that differs (`mismatch` only). */
      readonly field?: keyof GateClaims;
      readonly message: string;
    };

const refused = (reason: GateFailure, message: string, field?: keyof GateClaims) =>
  ({ valid: false, reason, message, ...(field === undefined ? {} : { field }) }) as const;

function isKeySet(key: GateKey): key is JSONWebKeySet {
  return typeof key === 'object' && 'keys' in key && Array.isArray(key.keys);
}

/** The same item indexes, in any order. */
function sameItems(a: readonly number[], b: readonly number[]): boolean {
  const sorted = (items: readonly number[]) => [...items].sort((x, y) => x - y);
  const other = sorted(b);
  return a.length === b.length && sorted(a).every((item, i) => item === other[i]);
}

/** The first claim that differs from the expectation, if one does. */
function mismatch(claims: GateClaims, expected: GateExpectation): keyof GateClaims | undefined {
  const checks: [keyof GateClaims, boolean][] = [
    ['sid', expected.sid === undefined || expected.sid === claims.sid],
    ['cause', expected.cause === undefined || expected.cause === claims.cause],
    ['call', expected.call === undefined || expected.call === claims.call],
    ['tool', expected.tool === undefined || expected.tool === claims.tool],
    ['args_digest', !('args' in expected) || argsDigest(expected.args) === claims.args_digest],
    ['policy', expected.policy === undefined || expected.policy === claims.policy],
    ['items', expected.items === undefined || sameItems(expected.items, claims.items)],
  ];
  return checks.find(([, ok]) => !ok)?.[0];
}

/**
 * Verifies a gate with `key` and, when given, against what the executor expects.
 * Refusals are answered, not thrown; a failure to fetch a remote JWKS still throws.
 */
export async function verifyGate(
  key: GateKey,
  gate: string,
  expected: GateExpectation = {},
): Promise<GateVerification> {
  let payload: unknown;
  try {
    const resolved = isKeySet(key) ? createLocalJWKSet(key) : key;
    ({ payload } = await jwtVerify(gate, resolved, {
      algorithms: [SIGNING_ALG],
      typ: GATE_TYPE,
    }));
  } catch (error) {
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
      return refused('signature', 'the gate’s signature does not verify');
    }
    if (error instanceof joseErrors.JWKSNoMatchingKey) {
      return refused('unknown_key', 'no key of the set signed the gate');
    }
    if (
      error instanceof joseErrors.JWSInvalid ||
      error instanceof joseErrors.JWTInvalid ||
      error instanceof joseErrors.JWTClaimValidationFailed ||
      error instanceof joseErrors.JOSEAlgNotAllowed ||
      error instanceof joseErrors.JOSENotSupported
    ) {
      return refused('malformed', `not a gate: ${error.message}`);
    }
    throw error;
  }
  const parsed = GatePayload.safeParse(payload);
  if (!parsed.success) return refused('malformed', 'the claims are not a gate’s');
  const { iat, ...claims } = parsed.data;
  const field = mismatch(claims, expected);
  if (field !== undefined) {
    return refused('mismatch', `the gate’s ${field} is not the call’s`, field);
  }
  return { valid: true, claims, issuedAt: iat * 1000 };
}
