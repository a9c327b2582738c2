/**
 * `GET /sessions` (interface 4.1, 2.11; decisions rows 37 to 40): the install's session
 * directory, newest first, optionally only the sessions filed under one principal (their
 * subject digest, row 38), paged by `limit` (default 50, at most 200) and `after`. The
 * page's `next` continues it, and so does the `Link: <…>; rel="next"` header (RFC 8288).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { DirectoryPage, ListSessionsQuery } from '../../schemas/sessions.ts';
import { subjectOf } from '../../sessions/ids.ts';
import { installCaller } from '../auth/install.ts';
import { problemResponses } from '../openapi-responses.ts';
import { directoryRow, type SessionContext } from './context.ts';

/** RFC 8288: the `Link` header of the page after this one. */
export function nextLink(
  url: string,
  query: Readonly<Record<string, string | number | undefined>>,
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) params.set(name, String(value));
  }
  return `<${url}?${params.toString()}>; rel="next"`;
}

/** Registers `GET /sessions`. */
export function directoryRoute(app: FastifyInstance, context: SessionContext): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/sessions',
    {
      schema: {
        summary: "List the install's sessions, newest first",
        description:
          'Pass `next` as `after` for the following page; the `Link` header with `rel="next"` carries the same.',
        tags: ['sessions'],
        security: [{ installKey: [] }],
        querystring: ListSessionsQuery,
        response: { 200: DirectoryPage, ...problemResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const install = await installCaller(request, context.controlStore);
      const { principal, after, limit } = request.query;
      const page = await context.directory.page(
        principal === undefined
          ? { install: install.id }
          : { install: install.id, subject: subjectOf(install.id, principal) },
        after,
        limit,
      );
      if (page.next !== null) {
        void reply.header(
          'link',
          nextLink(`${context.baseUrl}/sessions`, { principal, limit, after: page.next }),
        );
      }
      return { items: page.rows.map(directoryRow), next: page.next };
    },
  );
}
