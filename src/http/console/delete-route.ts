/**
 * `DELETE /<resources>/{id}` of a tenant's named resource (2.18; decisions rows 59, 71,
 * 78, 79): the owner deletes; a resource still in use is refused with 409 and what uses
 * it, and nothing is cascaded. Secrets, inference options and connections are deleted
 * this way; what differs is the path, the words and what uses them.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdParams } from '../../schemas/common.ts';
import { consoleCaller, requireOwner, type ConsoleAuthDeps } from '../../console/caller.ts';
import { problemResponses } from '../openapi-responses.ts';
import { PROBLEM_MEDIA_TYPE } from '../problem.ts';

export interface OwnerDeleteRoute {
  /** The collection path, e.g. `/secrets`; the route is `<path>/:id`. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly tag: string;
  /** What the 409 says, and the problem schema that lists what uses the resource. */
  readonly inUse: { readonly description: string; readonly schema: z.ZodType };
  /** Deletes the tenant's resource named `id`; throws NotFound or Conflict as 2.18 says. */
  readonly remove: (tenant: string, id: string) => Promise<void>;
}

/** Registers an owner's `DELETE <path>/{id}` answering 204. */
export function ownerDeleteRoute(
  app: FastifyInstance,
  deps: ConsoleAuthDeps,
  route: OwnerDeleteRoute,
): void {
  app.withTypeProvider<ZodTypeProvider>().delete(
    `${route.path}/:id`,
    {
      schema: {
        summary: route.summary,
        description: route.description,
        tags: [route.tag],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: {
          204: z.undefined().describe('Deleted.'),
          ...problemResponses(401, 403, 404),
          409: {
            description: route.inUse.description,
            content: { [PROBLEM_MEDIA_TYPE]: { schema: route.inUse.schema } },
          },
        },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      await route.remove(caller.tenant, request.params.id);
      return reply.code(204).send();
    },
  );
}
