/**
 * The executor's routes (interface 4.2, 2.9, 2.17; decisions rows 57, 65, 66):
 * `GET /sessions/{id}/executor/token` exchanges an assertion signed with the executor key
 * registered at session open for a session token that reads the executor's face and
 * claims; `POST /sessions/{id}/executor/claim {cause}` claims a call addressed to it and
 * answers with a grant while the call is unanswered. The work is `ExecutorAccess`'s.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { InvalidRequest } from '../../errors.ts';
import { IdParams, parseStreamId } from '../../schemas/common.ts';
import { ClaimAnswer, ClaimBody } from '../../schemas/executor.ts';
import { SessionAnswer } from '../../schemas/sessions.ts';
import { requireBearer } from '../../auth/bearer.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import type { SessionContext } from './context.ts';
import { requireAttached, sessionCredential } from './credential.ts';
import { noStore } from '../no-store.ts';

/** Registers the executor token exchange and the claim. */
export function executorRoutes(app: FastifyInstance, context: SessionContext): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get(
    '/sessions/:id/executor/token',
    {
      onSend: noStore,
      schema: {
        summary: "Exchange the executor's signed assertion for its session token",
        description:
          'The bearer is a JWT signed with the key registered at session open: `iss` the executor name, `aud` this URL under BASE_URL, `exp` at most 5 minutes ahead, a `jti` used once. The token answered reads the executor face (public records and those addressed to it) and claims.',
        tags: ['executors'],
        security: [{ executorAssertion: [] }],
        params: IdParams,
        response: { 200: SessionAnswer, ...problemResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const session = parseStreamId(request.params.id);
      if (session === null) {
        throw new InvalidRequest('invalid_session_id', 'params.id is not a session id', {
          field: 'params.id',
          reason: 'must be a session id (72 hex characters)',
        });
      }
      return context.executors.token(session, requireBearer(request.headers.authorization));
    },
  );
  routes.post(
    '/sessions/:id/executor/claim',
    {
      onSend: noStore,
      schema: {
        summary: 'Claim a call addressed to this executor',
        description:
          'Lands invoke.claimed and answers a grant bound to the call (first, then again on every later claim while the call is unanswered), or `completed` once it is. A cause the token is not shown is 404; shown but not this executor’s invoke.allowed, or a token that is not an executor’s, is 403.',
        tags: ['executors'],
        security: [{ sessionToken: [] }],
        params: IdParams,
        body: ClaimBody,
        response: { 200: ClaimAnswer, ...problemResponses(...BODY_PROBLEMS, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const credential = await sessionCredential(request, context.tokens);
      const session = requireAttached(credential, request.params.id);
      return context.executors.claim(session, credential, request.body.cause);
    },
  );
}
