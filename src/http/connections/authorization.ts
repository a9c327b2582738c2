/**
 * `POST /connections/{id}/authorize` and `GET /connections/callback` (3.3, 4.4; decisions
 * rows 43 and 45): the owner mints a fresh authorization URL; the authorization server
 * sends the owner's browser back to the callback, which finishes the link and answers
 * 303 to `return_to`.
 *
 * The callback takes no console token: the browser arrives from another site. Its
 * `state` is the credential (single use, bound to one tenant's connection), good only with
 * the cookie the answer that handed out its URL set on the owner's browser
 * (`src/connections/callback-binding.ts`). The request log scrubs `code` and `state`
 * from the URL (`src/logger.ts`).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ConnectionAuthorization } from '../../connections/authorization.ts';
import type { CallbackBinding } from '../../connections/callback-binding.ts';
import { IdParams } from '../../schemas/common.ts';
import { AuthorizeAnswer, CallbackQuery } from '../../schemas/connections.ts';
import { consoleCaller, requireOwner, type ConsoleAuthDeps } from '../../console/caller.ts';
import { problemResponses } from '../openapi-responses.ts';

export interface AuthorizationRouteDeps extends ConsoleAuthDeps {
  readonly authorization: ConnectionAuthorization;
  /** Binds each authorization URL handed out to the owner's browser. */
  readonly binding: CallbackBinding;
}

/** Registers the OAuth routes of connections. */
export function authorizationRoutes(app: FastifyInstance, deps: AuthorizationRouteDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/connections/:id/authorize',
    {
      schema: {
        summary: 'Mint a fresh authorization URL for a connection',
        description:
          'Owner. For a connection that links through OAuth: the URL the owner opens, in the browser that made this request: the answer sets a short-lived cookie the callback requires (`Set-Cookie`, `HttpOnly`, `SameSite=Lax`). A linked connection keeps working on its tokens until the new authorization replaces them.',
        tags: ['connections'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: { 200: AuthorizeAnswer, ...problemResponses(401, 403, 404, 409, 502) },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      const answer = await deps.authorization.authorize({
        tenant: caller.tenant,
        connection: request.params.id,
      });
      const cookie = deps.binding.setCookieFor(answer.authorize);
      if (cookie !== null) void reply.header('set-cookie', cookie);
      return answer;
    },
  );

  routes.get(
    '/connections/callback',
    {
      schema: {
        summary: 'Where the authorization server sends the owner back',
        description:
          'No token: `state` names one pending authorization, once, and the browser must bring the cookie the answer that handed out the URL set (else 403 `browser_mismatch`, the authorization left unused). With `code` the link is finished (code exchange with PKCE, live discovery); with `error` the connection stays as it is. Either way the browser is sent to `return_to`, with `error` in its query when the link did not finish.',
        tags: ['connections'],
        querystring: CallbackQuery,
        response: {
          303: z
            .undefined()
            .describe(
              'See Other: `Location` is `return_to`, with `error` in its query when the link did not finish.',
            ),
          ...problemResponses(400, 403),
        },
      },
    },
    async (request, reply) => {
      const cookies = request.headers.cookie;
      const target = await deps.authorization.callback(request.query, (state) =>
        deps.binding.presentedWith(state, cookies),
      );
      // Used up: the browser forgets the binding with the handle.
      const { state } = request.query;
      if (state !== undefined) void reply.header('set-cookie', deps.binding.clearCookieFor(state));
      return reply.redirect(target, 303);
    },
  );
}
