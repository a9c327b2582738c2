/**
 * Step 3: before performing a call, check offline that the service allowed exactly this
 * call (docs/architecture.md, "Verifying a gate"). The gate is a compact JWS
 * (`typ: gate+jwt`, EdDSA) over the session, the cause, the call id, the tool and the
 * digest of the arguments; the keys are the service's JWKS.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Settings } from './service.ts';

/** The parts of an `invoke.allowed` body the gate pins. */
export interface AllowedCall {
  /** The `model.output` that made the call (not the invoke.allowed's own cursor). */
  readonly cause: number;
  readonly call: string;
  readonly tool: string;
  readonly args: unknown;
  readonly gate: string;
}

export type GateCheck = (allowed: AllowedCall) => Promise<void>;

/** `sha256:<hex>` of the RFC 8785 (JCS) form of `args`. */
export const argsDigest = (args: unknown): string =>
  `sha256:${createHash('sha256')
    .update(canonicalize(args) ?? 'null')
    .digest('hex')}`;

/**
 * A check against `GET /.well-known/jwks.json` (fetched once, cached by jose, fetched
 * again for an unknown `kid`). It throws unless the gate verifies and pins this call.
 */
export function gateCheck(settings: Settings): GateCheck {
  const jwks = createRemoteJWKSet(new URL('/.well-known/jwks.json', settings.serviceUrl));
  return async (allowed) => {
    const { payload } = await jwtVerify(allowed.gate, jwks, {
      typ: 'gate+jwt',
      algorithms: ['EdDSA'],
    });
    const ours: Record<string, unknown> = {
      sid: settings.session,
      cause: allowed.cause,
      call: allowed.call,
      tool: allowed.tool,
      args_digest: argsDigest(allowed.args),
    };
    for (const [claim, value] of Object.entries(ours)) {
      if (payload[claim] !== value) throw new Error(`the gate's ${claim} is not this call's`);
    }
  };
}
