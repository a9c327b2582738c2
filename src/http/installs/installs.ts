/**
 * A tenant's installs in the console (interface 3.5, 4.3, 4.4, §7; decisions rows 39, 40,
 * 76): `GET /installs` and `GET /installs/{id}` for members, `PUT /installs/{id}` (replace
 * the consent) and `DELETE /installs/{id}` (tombstone) for owners.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TokenService } from '../../auth/tokens.ts';
import { composedDocument } from '../../consent/documents.ts';
import {
  deleteInstall,
  listInstalls,
  liveInstall,
  replaceConsent,
  type InstallHooks,
} from '../../consent/installs.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import { IdParams, queryInteger } from '../../schemas/common.ts';
import { InstallList } from '../../schemas/console.ts';
import { TenantConfig } from '../../schemas/tenant.ts';
import { ComposedDocument } from '../../schemas/vendor.ts';
import { consoleCaller, requireMember, requireOwner } from '../../console/caller.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';

export interface InstallRouteDeps {
  readonly controlStore: ControlStore;
  readonly tokens: TokenService;
}

/** Row 40: 50 rows by default, at most 200 (more is clamped), at least 1. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

const ListQuery = z.object({
  after: z.string().min(1, { error: 'must not be empty' }).max(256).optional(),
  limit: queryInteger(z.int().min(1, { error: 'must be at least 1' })).optional(),
});

/** Registers the install routes of the console. */
export function installRoutes(
  app: FastifyInstance,
  deps: InstallRouteDeps,
  hooks: InstallHooks,
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const store = deps.controlStore;

  routes.get(
    '/installs',
    {
      schema: {
        summary: "The tenant's installs",
        description:
          'Composed documents by page; pass `next` back as `after`. The next page is also linked as `Link: <…>; rel="next"`.',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        querystring: ListQuery,
        response: { 200: InstallList, ...problemResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const caller = requireMember(await consoleCaller(request, deps));
      const limit = Math.min(request.query.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
      const page = await listInstalls(store, caller.tenant, request.query.after, limit);
      if (page.next !== null) {
        const query = new URLSearchParams({ after: page.next, limit: String(limit) });
        void reply.header('link', `</installs?${query.toString()}>; rel="next"`);
      }
      return page;
    },
  );

  routes.get(
    '/installs/:id',
    {
      schema: {
        summary: 'One install and the document it runs under',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: { 200: ComposedDocument, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      return composedDocument(await liveInstall(store, caller.tenant, request.params.id));
    },
  );

  routes.put(
    '/installs/:id',
    {
      schema: {
        summary: "Replace the install's consent",
        description:
          'The tenant config must fit the vendor document and resolve under the tenant; the vendor config is unchanged. Sessions opened afterward use it, open ones keep theirs.',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        body: TenantConfig,
        response: {
          200: ComposedDocument,
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      return replaceConsent(store, caller.tenant, request.params.id, request.body);
    },
  );

  routes.delete(
    '/installs/:id',
    {
      schema: {
        summary: 'Delete the install',
        description:
          'Its key stops answering (the old key reads as gone, 404) and the install reads as gone.',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: {
          204: z.null().describe('Deleted.'),
          ...problemResponses(401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      await deleteInstall(store, caller.tenant, request.params.id, hooks);
      return reply.code(204).send(null);
    },
  );
}
