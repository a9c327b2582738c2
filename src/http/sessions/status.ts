/**
 * `GET /sessions/{id}/status` (interface 4.2, 2.10, 5 rule 2; decisions rows 7, 34 to 36,
 * 69): the session's status for a token that attaches to it and reads every public record.
 * A grant (an executor's credential for one call) reads no more than its call: 403
 * `insufficient_scope` (row 69, RFC 6750 §3.1).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { IdParams } from '../../schemas/common.ts';
import { SessionStatus } from '../../schemas/sessions.ts';
import { problemResponses } from '../openapi-responses.ts';
import { statusOf, type SessionContext } from './context.ts';
import { requireAttached, requireReader, sessionCredential } from './credential.ts';

/** Registers `GET /sessions/{id}/status`. */
export function statusRoute(app: FastifyInstance, context: SessionContext): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/sessions/:id/status',
    {
      schema: {
        summary: 'Read the status of a session',
        description:
          '`head` is the last landed cursor; `live.phase` is `idle` while the session is open and no turn runs, `ended` once archived.',
        tags: ['sessions'],
        security: [{ sessionToken: [] }],
        params: IdParams,
        response: { 200: SessionStatus, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const credential = await sessionCredential(request, context.tokens, { grants: true });
      requireReader(credential);
      const id = requireAttached(credential, request.params.id);
      return statusOf(context, id);
    },
  );
}
