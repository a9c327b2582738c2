/**
 * `PUT /console/tenant`, `GET /console/tenant` and `GET /console/memberships` (decisions
 * row 74): the console token's tenant is created with the caller as owner, or renamed and
 * given a new member list by an owner; any member reads its name and members; a user
 * reads every tenant they belong to with their role there.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { membershipsOf, putTenant, readTenant } from '../../console/tenants.ts';
import { WriteAnswer } from '../../schemas/common.ts';
import { Memberships, PutTenantBody, TenantRead } from '../../schemas/console.ts';
import { consoleCaller, requireMember, type ConsoleAuthDeps } from '../../console/caller.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';

const security = [{ consoleToken: [] }];

/** Registers the tenant and membership routes. */
export function consoleTenantRoutes(app: FastifyInstance, deps: ConsoleAuthDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.put(
    '/console/tenant',
    {
      schema: {
        summary: "Create or update the console token's tenant",
        description:
          'Creates the tenant with the caller as owner (201), or, for an owner, renames it and replaces its member list with `members` (absent keeps the list); the caller stays owner whatever the list says.',
        tags: ['console'],
        security,
        body: PutTenantBody,
        response: {
          200: WriteAnswer.describe('Replaced, or unchanged when name and members are the same.'),
          201: WriteAnswer.describe('Created, with the caller as owner.'),
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 409),
        },
      },
    },
    async (request, reply) => {
      const caller = await consoleCaller(request, deps);
      const outcome = await putTenant(deps.controlStore, caller, request.body);
      return reply.code(outcome === 'created' ? 201 : 200).send({ outcome });
    },
  );

  routes.get(
    '/console/tenant',
    {
      schema: {
        summary: "The console token's tenant and its members",
        description: 'Members. The tenant’s name and every member with their role, by user.',
        tags: ['console'],
        security,
        response: {
          200: TenantRead.describe('The tenant, its name and members.'),
          ...problemResponses(401, 403),
        },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      return readTenant(deps.controlStore, caller.tenant);
    },
  );

  routes.get(
    '/console/memberships',
    {
      schema: {
        summary: "The caller's tenants and roles",
        description:
          'Every tenant the console user belongs to, across tenants, with the role there.',
        tags: ['console'],
        security,
        response: {
          200: Memberships.describe('Tenants and roles of the caller.'),
          ...problemResponses(401),
        },
      },
    },
    async (request) => {
      const caller = await consoleCaller(request, deps);
      return membershipsOf(deps.controlStore, caller.user);
    },
  );
}
