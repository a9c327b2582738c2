/**
 * The console's session routes (interface 4.4; decisions rows 7, 60, 73 to 75):
 *
 * - `GET /console/sessions`: the tenant's sessions for any member, newest first, each row
 *   naming its install, paged like `GET /sessions` (`next` and `Link`).
 * - `POST /console/sessions/{id}/token`: an owner's token on a tenant session, writing as
 *   `console:<user>` (2.9).
 * - `POST /console/sessions/{id}/archive`: an owner archives a tenant session, `by`
 *   `console:<user>`; answers 2.10, a repeat the same.
 *
 * Order (row 83): 401 (console token), 403 (member or owner), then 404 for an id that is
 * malformed or not the tenant's (row 7: console paths 404).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { IdParams } from '../../schemas/common.ts';
import {
  ConsoleDirectoryPage,
  ConsoleSessionsQuery,
  SessionAnswer,
  SessionStatus,
} from '../../schemas/sessions.ts';
import { sessionOfTenant } from '../../sessions/ownership.ts';
import { consoleCaller, requireMember, requireOwner } from '../../console/caller.ts';
import { problemResponses } from '../openapi-responses.ts';
import { directoryRow, statusOf, type SessionContext } from './context.ts';
import { nextLink } from './directory.ts';
import { noStore } from '../no-store.ts';

/** Registers the console's session routes. */
export function consoleSessionRoutes(app: FastifyInstance, context: SessionContext): void {
  const auth = { tokens: context.consoleTokens, controlStore: context.controlStore };
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/console/sessions',
    {
      schema: {
        summary: "List the tenant's sessions, newest first",
        tags: ['console'],
        security: [{ consoleToken: [] }],
        querystring: ConsoleSessionsQuery,
        response: { 200: ConsoleDirectoryPage, ...problemResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const caller = requireMember(await consoleCaller(request, auth));
      const { after, limit } = request.query;
      const page = await context.directory.page({ tenant: caller.tenant }, after, limit);
      if (page.next !== null) {
        void reply.header(
          'link',
          nextLink(`${context.baseUrl}/console/sessions`, { limit, after: page.next }),
        );
      }
      return {
        items: page.rows.map((row) => ({ ...directoryRow(row), install: row.install })),
        next: page.next,
      };
    },
  );

  routes.post(
    '/console/sessions/:id/token',
    {
      onSend: noStore,
      schema: {
        summary: 'Mint a token on a tenant session, writing as the console user',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: { 200: SessionAnswer, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, auth));
      const session = await sessionOfTenant(context.directory, caller.tenant, request.params.id);
      const minted = await context.tokens.mint({
        session: session.id,
        producer: caller.producer,
        tenant: session.tenant,
      });
      return { session: session.id, token: minted.token, expires: minted.expires };
    },
  );

  routes.post(
    '/console/sessions/:id/archive',
    {
      schema: {
        summary: 'Archive a tenant session',
        description:
          '`session.archived {by: console:<user>}` lands as the final record. Idempotent.',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: { 200: SessionStatus, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, auth));
      const session = await sessionOfTenant(context.directory, caller.tenant, request.params.id);
      await context.lifecycle.archive(session, { by: 'console', user: caller.user });
      return statusOf(context, session.id);
    },
  );
}
