/**
 * `PUT /secrets/{id}`, `GET /secrets`, `DELETE /secrets/{id}` (2.14, 2.18, decisions rows
 * 55, 59, 71, 79): owners write and delete, members list names and times. A value is
 * never served back; the request log line carries no body, so it is never logged either.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { deleteSecret, listSecrets, putSecret } from '../../console/secrets.ts';
import { NameParams, WriteAnswer } from '../../schemas/common.ts';
import { PutSecretBody, SecretList } from '../../schemas/console.ts';
import { SecretInUseProblem } from '../../schemas/problem.ts';
import {
  consoleCaller,
  requireMember,
  requireOwner,
  type ConsoleAuthDeps,
} from '../../console/caller.ts';
import { ownerDeleteRoute } from './delete-route.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';

const security = [{ consoleToken: [] }];

/** Registers the secret routes. */
export function secretRoutes(app: FastifyInstance, deps: ConsoleAuthDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.put(
    '/secrets/:id',
    {
      schema: {
        summary: 'Hold a secret value under a name',
        description:
          'Owner. The value is sealed at rest and never served back; the same value again is `unchanged`.',
        tags: ['secrets'],
        security,
        params: NameParams,
        body: PutSecretBody,
        response: {
          200: WriteAnswer.describe('Replaced, or unchanged when the value is the same.'),
          201: WriteAnswer.describe('Created.'),
          ...problemResponses(...BODY_PROBLEMS, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      const outcome = await putSecret(
        deps.controlStore,
        caller.tenant,
        request.params.id,
        request.body.value,
      );
      return reply.code(outcome === 'created' ? 201 : 200).send({ outcome });
    },
  );

  routes.get(
    '/secrets',
    {
      schema: {
        summary: "The tenant's secrets, without values",
        tags: ['secrets'],
        security,
        response: {
          200: SecretList.describe('Names and times, never values.'),
          ...problemResponses(401, 403),
        },
      },
    },
    async (request) => {
      const caller = requireMember(await consoleCaller(request, deps));
      return listSecrets(deps.controlStore, caller.tenant);
    },
  );

  ownerDeleteRoute(app, deps, {
    path: '/secrets',
    summary: 'Delete a secret',
    description:
      'Owner. Refused with the 2.18 lists while inference options or connections name the secret; nothing is cascaded.',
    tag: 'secrets',
    inUse: {
      description:
        'Conflict. Inference options or connections still name the secret (`secret_in_use`).',
      schema: SecretInUseProblem,
    },
    remove: (tenant, id) => deleteSecret(deps.controlStore, tenant, id),
  });
}
