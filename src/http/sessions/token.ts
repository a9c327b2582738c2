/**
 * `GET /sessions/{id}/token` (interface 4.1, 5 rule 3, 2.9; decisions rows 4, 31, 64): a
 * fresh token for a principal the install vouches for, on a session the install owns.
 *
 * Row 4: the id must be 64 or 72 hex characters (else 400); a 64-hex id never names a
 * session (404). A foreign or unknown id is 404 too. Archived sessions still mint: the
 * token reads the log, and the log refuses its appends (row 64).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SessionTokenParams } from '../../schemas/common.ts';
import { PrincipalQuery, SessionAnswer } from '../../schemas/sessions.ts';
import { sessionOfInstall } from '../../sessions/ownership.ts';
import { installCaller } from '../auth/install.ts';
import { noStore } from '../no-store.ts';
import { problemResponses } from '../openapi-responses.ts';
import type { SessionContext } from './context.ts';

/** Registers `GET /sessions/{id}/token`. */
export function tokenRoute(app: FastifyInstance, context: SessionContext): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/sessions/:id/token',
    {
      onSend: noStore,
      schema: {
        summary: 'Mint a fresh token for a session the install owns',
        description:
          'The token writes as `principal:<principal>`, a name the install vouches for, and carries a fresh idempotency key. Archived sessions still mint tokens that read. The token ends early when the install key it was minted with is rotated or revoked, or the install is deleted.',
        tags: ['sessions'],
        security: [{ installKey: [] }],
        params: SessionTokenParams,
        querystring: PrincipalQuery,
        response: { 200: SessionAnswer, ...problemResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const install = await installCaller(request, context.controlStore);
      // Row 4: a 64-hex id passes the path check but names no session, so it reads as 404.
      const session = await sessionOfInstall(
        context.directory,
        context.idKey,
        install.id,
        request.params.id,
      );
      const minted = await context.tokens.mint({
        session: session.id,
        producer: `principal:${request.query.principal}`,
        tenant: session.tenant,
        installKeyHash: install.value.keyHash ?? undefined,
      });
      return { session: session.id, token: minted.token, expires: minted.expires };
    },
  );
}
