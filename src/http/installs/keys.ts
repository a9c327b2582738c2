/**
 * An install's key in the console (interface 4.4, §5 rule 4; decisions rows 32, 33, 77):
 * `POST /installs/{id}/key` rotates it, the new key shown once and the old one refused at
 * once; `DELETE /installs/{id}/key` revokes it. Owners only.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TokenService } from '../../auth/tokens.ts';
import type { Entropy } from '../../clock.ts';
import { revokeKey, rotateKey, type InstallHooks } from '../../consent/installs.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import { IdParams } from '../../schemas/common.ts';
import { InstallKeyAnswer } from '../../schemas/console.ts';
import { consoleCaller, requireOwner } from '../../console/caller.ts';
import { problemResponses } from '../openapi-responses.ts';
import { noStore } from '../no-store.ts';

export interface InstallKeyDeps {
  readonly controlStore: ControlStore;
  readonly tokens: TokenService;
  readonly entropy: Entropy;
  /** Told of every rotation and revocation: the old key's session tokens end at once. */
  readonly installHooks: InstallHooks;
}

/** Registers `POST /installs/{id}/key` and `DELETE /installs/{id}/key`. */
export function installKeyRoutes(app: FastifyInstance, deps: InstallKeyDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/installs/:id/key',
    {
      onSend: noStore,
      schema: {
        summary: "Rotate the install's key",
        description:
          'Answers the new key once; the old key is refused from now on (401), and so are the session tokens minted with it.',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: { 200: InstallKeyAnswer, ...problemResponses(401, 403, 404, 409) },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      const key = await rotateKey(
        deps.controlStore,
        deps.entropy,
        caller.tenant,
        request.params.id,
      );
      deps.installHooks.keyChanged(request.params.id);
      return { key };
    },
  );

  routes.delete(
    '/installs/:id/key',
    {
      schema: {
        summary: "Revoke the install's key",
        description:
          'No key answers for the install until a new one is rotated in; the session tokens minted with the revoked key are refused (401).',
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        response: {
          204: z.null().describe('Revoked.'),
          ...problemResponses(401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      await revokeKey(deps.controlStore, caller.tenant, request.params.id);
      deps.installHooks.keyChanged(request.params.id);
      return reply.code(204).send(null);
    },
  );
}
