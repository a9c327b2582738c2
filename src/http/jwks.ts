/**
 * `GET /.well-known/jwks.json`: the service's public signing keys as a
 * JSON Web Key Set (RFC 7517 §5), so an executor verifies the gate of an `invoke.allowed`
 * offline (`src/gate/gate.ts`; docs/architecture.md, "Verifying a gate"). Open to anyone:
 * public keys say nothing secret. Cached for a few minutes: long enough to spare the
 * service, short enough that a new key reaches verifiers soon after it is configured
 * (jose's `createRemoteJWKSet` also refetches when it meets an unknown `kid`).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { exportJWK } from 'jose';
import { z } from 'zod';
import { SIGNING_ALG, type SigningKey } from '../auth/key-material.ts';
import { problemResponses } from './openapi-responses.ts';

/** An Ed25519 public key (RFC 8037) as the set serves it. */
const PublicJwk = z
  .object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string().describe('The public key, base64url.'),
    kid: z.string().describe('The key id gates and tokens name in their `kid` header.'),
    alg: z.literal(SIGNING_ALG),
    use: z.literal('sig'),
  })
  .meta({ id: 'PublicJwk', description: 'One public signing key of the service.' });

export const JsonWebKeySet = z
  .object({ keys: z.array(PublicJwk) })
  .meta({ id: 'JsonWebKeySet', description: 'The service’s public signing keys (RFC 7517).' });
export type JsonWebKeySet = z.infer<typeof JsonWebKeySet>;

/** Verifiers refetch within five minutes. */
export const JWKS_CACHE_CONTROL = 'public, max-age=300';

/** The public halves of `keys` as a JWKS. */
export async function publicKeySet(keys: readonly SigningKey[]): Promise<JsonWebKeySet> {
  const jwks = await Promise.all(
    keys.map(async (key) => {
      const { kty, crv, x } = await exportJWK(key.publicKey);
      return JsonWebKeySet.shape.keys.element.parse({
        kty,
        crv,
        x,
        kid: key.kid,
        alg: SIGNING_ALG,
        use: 'sig',
      });
    }),
  );
  return { keys: jwks };
}

export interface JwksDeps {
  /** The token service: its signing key signs tokens and gates. */
  readonly tokens: { readonly signingKey: SigningKey };
}

/** Registers `GET /.well-known/jwks.json`. */
export function jwksRoutes(app: FastifyInstance, deps: JwksDeps): void {
  // The keys are fixed for the process: export them once, on the first request.
  let set: Promise<JsonWebKeySet> | undefined;
  app.withTypeProvider<ZodTypeProvider>().get(
    '/.well-known/jwks.json',
    {
      schema: {
        summary: 'The service’s public signing keys, to verify gates offline',
        description:
          'A JSON Web Key Set of the Ed25519 keys the service signs gates (and tokens) with. An executor verifies the `gate` of each `invoke.allowed` against it by `kid`.',
        tags: ['service'],
        response: { 200: JsonWebKeySet, ...problemResponses() },
      },
    },
    async (_request, reply) => {
      set ??= publicKeySet([deps.tokens.signingKey]).catch((error: unknown) => {
        set = undefined;
        throw error;
      });
      void reply.header('cache-control', JWKS_CACHE_CONTROL);
      return set;
    },
  );
}
