/**
 * `POST /sessions` (interface 4.1, 3.1 row 1, 2.9; decisions rows 5, 31, 47, 62, 63): an
 * install opens a session for a principal it names. Answers 201 with the session id and a
 * token that attaches to it.
 *
 * Order (row 83): the query and body (400, with the field and reason; the executor's key
 * must import), the install key (401, 404 once the install is gone), then the catalogs
 * (409 `catalog_changed`, 502).
 */
import { createPublicKey } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { InvalidRequest } from '../../errors.ts';
import type { ExecutorSpec } from '../../schemas/executor.ts';
import { CatalogChangedProblem } from '../../schemas/problem.ts';
import { OpenSessionRequest, PrincipalQuery, SessionAnswer } from '../../schemas/sessions.ts';
import { installCaller } from '../auth/install.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import { PROBLEM_MEDIA_TYPE } from '../problem.ts';
import type { SessionContext } from './context.ts';
import { noStore } from '../no-store.ts';

/** Row 62: the executor's key must be an Ed25519 or P-256 public key that imports. */
function checkExecutorKey(executor: ExecutorSpec | undefined): void {
  if (executor === undefined) return;
  const key = executor.public_key;
  let type: string | undefined;
  let curve: string | undefined;
  try {
    const imported =
      typeof key === 'string' ? createPublicKey(key) : createPublicKey({ key, format: 'jwk' });
    type = imported.asymmetricKeyType;
    curve = imported.asymmetricKeyDetails?.namedCurve;
  } catch {
    type = undefined;
  }
  if (type === 'ed25519' || (type === 'ec' && curve === 'prime256v1')) return;
  throw new InvalidRequest('invalid_request', 'body.executor.public_key does not import', {
    field: 'body.executor.public_key',
    reason: 'must be an Ed25519 or P-256 public key that imports',
  });
}

/** Registers `POST /sessions`. */
export function openRoute(app: FastifyInstance, context: SessionContext): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/sessions',
    {
      onSend: noStore,
      schema: {
        summary: 'Open a session for a principal',
        description:
          'Pins the composed document the session runs under, checks every connected MCP catalog against the kept one, lands `session.opened` at cursor 1 and answers a token (1 h) that attaches to the session.',
        tags: ['sessions'],
        security: [{ installKey: [] }],
        querystring: PrincipalQuery,
        body: OpenSessionRequest,
        response: {
          201: SessionAnswer,
          ...problemResponses(...BODY_PROBLEMS, 401, 404, 409, 502),
          // Row 47: the 409 names the connections whose catalog changed.
          409: {
            description:
              'Conflict. A connected MCP catalog changed since it was linked (`catalog_changed`, `connections` names them).',
            content: { [PROBLEM_MEDIA_TYPE]: { schema: CatalogChangedProblem } },
          },
        },
      },
    },
    async (request, reply) => {
      checkExecutorKey(request.body.executor);
      const install = await installCaller(request, context.controlStore);
      const answer = await context.lifecycle.open(install, request.query.principal, request.body);
      return reply.code(201).send(answer);
    },
  );
}
