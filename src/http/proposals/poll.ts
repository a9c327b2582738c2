/**
 * `POST /consent/token`, the vendor's poll (decisions row 30, RFC 8628 §3.4 and §3.5,
 * notes §3): `Authorization: Bearer <poll_secret>` and `{request}`. A wait or a stop is
 * a 400 problem whose `error` member is `authorization_pending`, `slow_down` (with the
 * interval now in force) or `expired_token`; a grant is the receipt; a secret that does
 * not match is 401.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireBearer } from '../../auth/bearer.ts';
import type { ProposalFlow } from '../../consent/proposals.ts';
import { PollProblem, Problem } from '../../schemas/problem.ts';
import { PollAnswer, PollBody } from '../../schemas/vendor.ts';
import { problemResponses } from '../openapi-responses.ts';
import { PROBLEM_MEDIA_TYPE } from '../problem.ts';
import { noStore } from '../no-store.ts';

/** Registers `POST /consent/token`. */
export function pollRoute(app: FastifyInstance, flow: ProposalFlow): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/consent/token',
    {
      onSend: noStore,
      schema: {
        summary: 'Poll a proposal for its receipt',
        description:
          'RFC 8628 semantics: wait `interval` ms between polls; polling sooner answers `slow_down` and adds 5000 ms to the interval.',
        tags: ['vendor'],
        security: [{ pollSecret: [] }],
        body: PollBody,
        response: {
          200: PollAnswer,
          ...problemResponses(401, 413, 415),
          400: {
            description:
              'Bad Request. `error` says to keep polling (`authorization_pending`), to poll slower (`slow_down`) or to stop (`expired_token`, or `access_denied` once an owner declined); a malformed body names the field and reason.',
            content: { [PROBLEM_MEDIA_TYPE]: { schema: z.union([PollProblem, Problem]) } },
          },
        },
      },
    },
    async (request) =>
      flow.poll(request.body.request, requireBearer(request.headers.authorization)),
  );
}
