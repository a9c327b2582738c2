/**
 * `POST /console/token` (decisions row 73): a console token for one (user, tenant), got
 * either by exchanging an OpenID Connect ID token from `CONSOLE_OIDC_ISSUER` (RFC 8693
 * style, `{subject_token, tenant}`) or through the operator grant (`Authorization: Bearer
 * <operator token>` with `{user, tenant}`), for a deployment without an identity provider.
 *
 * A tenant that exists only gives tokens to its members (403 otherwise); a tenant that
 * does not exist yet gives one to anybody, so `PUT /console/tenant` can create it with
 * the caller as owner (row 74). The role is not in the token: it is read per request.
 *
 * With `CONSOLE_OIDC_ISSUER` set the operator grant is off unless `OPERATOR_GRANT=on`;
 * every answer carries a credential and says `Cache-Control: no-store`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireBearer } from '../../auth/bearer.ts';
import { hashCredential } from '../../auth/key-material.ts';
import type { TokenService } from '../../auth/tokens.ts';
import type { OidcVerifier } from '../../console/oidc.ts';
import { Forbidden, Unauthenticated } from '../../errors.ts';
import type { MembershipValue } from '../../resources/types.ts';
import { ConsoleTokenAnswer, ConsoleTokenBody } from '../../schemas/console.ts';
import type { ControlStore, Versioned } from '../../storage/control-store.ts';
import { CONSOLE_TOKEN_TTL_MS, membershipClaim } from '../../console/caller.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import { noStore } from '../no-store.ts';

export interface ConsoleTokenDeps {
  readonly tokens: TokenService;
  readonly controlStore: ControlStore;
  /** SHA-256 hex of the operator token. */
  readonly operatorTokenHash: string;
  /** Verifies ID tokens of `CONSOLE_OIDC_ISSUER` (`src/services.ts`); undefined without one. */
  readonly oidc: OidcVerifier | undefined;
  /**
   * Whether the operator grant mints console tokens (`OPERATOR_GRANT`). Absent: only while
   * no identity provider is configured, so a deployment that signs its
   * users in through one has no second, shared way in unless it asks for it.
   */
  readonly operatorGrant?: boolean;
}

/** The operator token of a request, compared by its SHA-256 in constant time. */
function requireOperator(header: string | undefined, operatorTokenHash: string): void {
  const presented = Buffer.from(hashCredential(requireBearer(header)), 'hex');
  const expected = Buffer.from(operatorTokenHash, 'hex');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    throw new Unauthenticated('the operator token does not match', true);
  }
}

/** Registers `POST /console/token`. */
export function consoleTokenRoutes(app: FastifyInstance, deps: ConsoleTokenDeps): void {
  const { oidc } = deps;
  const operatorGrant = deps.operatorGrant ?? oidc === undefined;

  app.withTypeProvider<ZodTypeProvider>().post(
    '/console/token',
    {
      onSend: noStore,
      schema: {
        summary: 'Get a console token (OIDC exchange or operator grant)',
        description:
          'Send `{subject_token, tenant}` with an OpenID Connect ID token from the configured issuer (its `sub` is the user), or `{user, tenant}` with `Authorization: Bearer <operator token>` (the operator grant, off when an issuer is configured unless `OPERATOR_GRANT=on`). A tenant that exists gives tokens to its members only; one that does not exist yet gives one to anybody, so `PUT /console/tenant` can create it. The token ends when the membership it was minted for does.',
        tags: ['console'],
        security: [{}, { operatorToken: [] }],
        body: ConsoleTokenBody,
        response: {
          200: ConsoleTokenAnswer.describe('A console token for (user, tenant), 1 h.'),
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 502),
        },
      },
    },
    async (request) => {
      const body = request.body;
      let user: string;
      if ('subject_token' in body) {
        if (oidc === undefined) {
          throw new Unauthenticated('no OpenID Connect issuer is configured', true);
        }
        user = await oidc.verify(body.subject_token);
      } else {
        if (!operatorGrant) {
          throw new Unauthenticated(
            'the operator grant is off: sign in with an ID token of the identity provider',
            true,
          );
        }
        requireOperator(request.headers.authorization, deps.operatorTokenHash);
        user = body.user;
      }
      const tenant = await deps.controlStore.get('tenant', '', body.tenant);
      let membership: Versioned<MembershipValue> | null = null;
      if (tenant !== null) {
        membership = await deps.controlStore.get('membership', body.tenant, user);
        if (membership === null) {
          throw new Forbidden('not_member', `${user} is not a member of tenant ${body.tenant}`);
        }
      }
      // The token stands on this membership and ends with it.
      const minted = await deps.tokens.mint(
        'console',
        { sub: `console:${user}`, tid: body.tenant, ...membershipClaim(membership) },
        CONSOLE_TOKEN_TTL_MS,
      );
      return { token: minted.token, expires: minted.expires, user };
    },
  );
}
