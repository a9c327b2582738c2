/**
 * `POST /sessions/{id}/archive` (interface 3.1 row 3, 4.4; decisions rows 60, 61): the
 * owning install archives a session. `session.archived {by: install}` lands last and
 * nothing lands again; the answer is the status (2.10), `archived` true and phase
 * `ended`. A repeat answers the same (200). A session the key does not own is 404.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { IdParams } from '../../schemas/common.ts';
import { SessionStatus } from '../../schemas/sessions.ts';
import { problemResponses } from '../openapi-responses.ts';
import { installSession, statusOf, type SessionContext } from './context.ts';

/** Registers `POST /sessions/{id}/archive`. */
export function archiveRoute(app: FastifyInstance, context: SessionContext): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/sessions/:id/archive',
    {
      schema: {
        summary: 'Archive a session the install owns',
        description:
          '`session.archived` lands as the final record; appends then answer 409 `session_archived`. Idempotent.',
        tags: ['sessions'],
        security: [{ installKey: [] }],
        params: IdParams,
        response: { 200: SessionStatus, ...problemResponses(401, 404) },
      },
    },
    async (request) => {
      const session = await installSession(context, request, request.params.id);
      await context.lifecycle.archive(session, { by: 'install' });
      return statusOf(context, session.id);
    },
  );
}
