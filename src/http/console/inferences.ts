/**
 * `PUT/GET/DELETE /inferences/{id}` and `GET /inferences` (2.13, 2.16, 2.18, decisions
 * rows 48 to 51, 56, 59, 71, 79): owners write and delete, members read.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  deleteInference,
  getInference,
  listInferences,
  putInference,
} from '../../console/inferences.ts';
import { IdParams, NameParams, WriteAnswer } from '../../schemas/common.ts';
import { InferenceList, InferenceOption, InferenceRead } from '../../schemas/inference.ts';
import { InUseByInstallsProblem } from '../../schemas/problem.ts';
import {
  consoleCaller,
  requireMember,
  requireOwner,
  type ConsoleAuthDeps,
} from '../../console/caller.ts';
import { ownerDeleteRoute } from './delete-route.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';

const security = [{ consoleToken: [] }];

/** Registers the inference option routes. */
export function inferenceRoutes(app: FastifyInstance, deps: ConsoleAuthDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.put(
    '/inferences/:id',
    {
      schema: {
        summary: 'Define an inference option under a name',
        description:
          'Owner. A `credential` must name a secret the tenant holds. Installs that select the option follow a replacement.',
        tags: ['inferences'],
        security,
        params: NameParams,
        body: InferenceOption,
        response: {
          200: WriteAnswer.describe('Replaced, or unchanged when the option is the same.'),
          201: WriteAnswer.describe('Created.'),
          // 409: another owner wrote the option at the same moment; try again.
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 409),
        },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      const outcome = await putInference(
        deps.controlStore,
        caller.tenant,
        request.params.id,
        request.body,
      );
      return reply.code(outcome === 'created' ? 201 : 200).send({ outcome });
    },
  );

  routes.get(
    '/inferences',
    {
      schema: {
        summary: "The tenant's inference options",
        tags: ['inferences'],
        security,
        response: {
          200: InferenceList.describe('Every option, by name.'),
          ...problemResponses(401, 403),
        },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      return listInferences(deps.controlStore, caller.tenant);
    },
  );

  routes.get(
    '/inferences/:id',
    {
      schema: {
        summary: 'One inference option',
        tags: ['inferences'],
        security,
        params: IdParams,
        response: {
          200: InferenceRead.describe('The option with its name and times.'),
          ...problemResponses(401, 403, 404),
        },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      return getInference(deps.controlStore, caller.tenant, request.params.id);
    },
  );

  ownerDeleteRoute(app, deps, {
    path: '/inferences',
    summary: 'Delete an inference option',
    description:
      'Owner. Refused with the installs that select it while any does; nothing is cascaded.',
    tag: 'inferences',
    inUse: {
      description: 'Conflict. Installs still select the option (`inference_in_use`).',
      schema: InUseByInstallsProblem,
    },
    remove: (tenant, id) => deleteInference(deps.controlStore, tenant, id),
  });
}
