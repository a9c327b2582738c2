/**
 * `PUT /connections/{id}`, `GET /connections/{id}`, `GET /connections`,
 * `DELETE /connections/{id}` (2.12, 3.3, 4.3, 4.4; decisions rows 41 to 46, 56, 71, 78):
 * owners link and delete, members read. The OAuth routes are in `authorization.ts`.
 * No answer carries a token or a secret value (row 41).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ConnectionAuthorization } from '../../connections/authorization.ts';
import type { ConnectionService } from '../../connections/service.ts';
import { CallbackBinding } from '../../connections/callback-binding.ts';
import { wireOf } from '../../connections/stored.ts';
import { IdParams } from '../../schemas/common.ts';
import {
  Connection,
  ConnectionList,
  PutConnectionAnswer,
  PutConnectionBody,
} from '../../schemas/connections.ts';
import { InUseByInstallsProblem } from '../../schemas/problem.ts';
import {
  consoleCaller,
  requireMember,
  requireOwner,
  type ConsoleAuthDeps,
} from '../../console/caller.ts';
import { ownerDeleteRoute } from '../console/delete-route.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import { authorizationRoutes } from './authorization.ts';

/** What the connection routes are built from (parts of `AppDeps` and of `Services`). */
export interface ConnectionRouteDeps extends ConsoleAuthDeps {
  readonly connections: ConnectionService;
  readonly authorization: ConnectionAuthorization;
  /** The root key the browser binding of authorizations derives from. */
  readonly sealKey: Buffer;
  /** `BASE_URL`: the binding cookie follows its scheme and path. */
  readonly baseUrl: string;
}

const security = [{ consoleToken: [] }];

/** Registers every connection route. */
export function connectionRoutes(app: FastifyInstance, deps: ConnectionRouteDeps): void {
  const { connections, authorization } = deps;
  const binding = new CallbackBinding(deps.sealKey, deps.baseUrl);
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.put(
    '/connections/:id',
    {
      schema: {
        summary: 'Link an MCP server under a name',
        description:
          'Owner. Discovers the catalog live (every page of `tools/list`), sending the `credential` secret as a bearer. A server that demands authorization leaves the connection `authorizing` and the answer carries the `authorize` URL, to be opened in the browser that made this request (the answer sets the cookie the callback requires). `name` must equal the path id; `return_to` must be on the service origin or an allowlisted one. An endpoint (or a URL its server points at) on an address the egress guard refuses, or redirecting to another host: 400 `endpoint_refused` naming `body.endpoint` (`EGRESS_ALLOW` allows addresses). Unreachable, refused registration, an unreadable catalog, or one over the bounds (1,000 tools, 2 MiB, tool names `^[a-zA-Z0-9_-]{1,64}$`, valid JSON Schemas): 502, nothing changed; the problem never repeats what the server said.',
        tags: ['connections'],
        security,
        params: IdParams,
        body: PutConnectionBody,
        response: {
          200: PutConnectionAnswer.describe('Replaced, or unchanged (same config and catalog).'),
          201: PutConnectionAnswer.describe('Created.'),
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 409, 502),
        },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      const answer = await connections.put(caller.tenant, request.params.id, request.body);
      // The URL is good only in the browser that asked for it.
      const cookie = answer.authorize === undefined ? null : binding.setCookieFor(answer.authorize);
      if (cookie !== null) void reply.header('set-cookie', cookie);
      return reply.code(answer.outcome === 'created' ? 201 : 200).send(answer);
    },
  );

  routes.get(
    '/connections',
    {
      schema: {
        summary: "The tenant's connections",
        tags: ['connections'],
        security,
        response: { 200: ConnectionList, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      return connections.list(caller.tenant);
    },
  );

  routes.get(
    '/connections/:id',
    {
      schema: {
        summary: 'A connection with the catalog captured when last linked',
        description:
          'Members. A linked OAuth connection whose tokens the server now refuses, and that cannot be refreshed, reads as `authorizing`; `POST /connections/{id}/authorize` gives the URL, bound to the browser that asks for it (an `authorize` URL read here finishes only in the browser that minted it).',
        tags: ['connections'],
        security,
        params: IdParams,
        response: { 200: Connection, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      const ref = { tenant: caller.tenant, connection: request.params.id };
      const stored = await connections.require(ref);
      return wireOf(await authorization.check(ref, stored));
    },
  );

  ownerDeleteRoute(app, deps, {
    path: '/connections',
    summary: 'Delete a connection',
    description:
      'Owner. Refused while installs use the connection; otherwise its OAuth state is forgotten too.',
    tag: 'connections',
    inUse: {
      description:
        'Conflict. Installs still use the connection (`connection_in_use`); `installs` names them.',
      schema: InUseByInstallsProblem,
    },
    remove: (tenant, connection) => connections.remove({ tenant, connection }),
  });

  authorizationRoutes(app, { ...deps, binding });
}
