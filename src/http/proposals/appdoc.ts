/**
 * The vendor's document routes (interface 4.1, 3.2 row 1, §5, §7; decisions rows 16 to 22,
 * 28, 29, 86, 94): `POST /appdoc` proposes without a credential, `GET /appdoc` serves the
 * composed document to an install key, `POST /installs/{id}/proposals` proposes an update
 * of the install the key names.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { composedDocument } from '../../consent/documents.ts';
import type { ProposalFlow } from '../../consent/proposals.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import { IdParams } from '../../schemas/common.ts';
import { ComposedDocument, ProposalAnswer, VendorDocument } from '../../schemas/vendor.ts';
import { installCaller, requireInstallId } from '../auth/install.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import { noStore } from '../no-store.ts';

export interface AppdocDeps {
  readonly controlStore: ControlStore;
  /** Largest body of `POST /appdoc`; `DEFAULT_APPDOC_BODY_LIMIT` when absent. */
  readonly appdocBodyLimit?: number;
}

/**
 * Anyone may post a proposal, so its body is bounded well below the 1 MiB
 * of row 20. A larger document is proposed as an update (`POST /installs/{id}/proposals`,
 * under an install key and the app-wide `BODY_LIMIT`) or with `APPDOC_BODY_LIMIT` raised.
 */
export const DEFAULT_APPDOC_BODY_LIMIT = 256 * 1024;

/** Registers `POST /appdoc`, `GET /appdoc` and `POST /installs/{id}/proposals`. */
export function appdocRoutes(app: FastifyInstance, deps: AppdocDeps, flow: ProposalFlow): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/appdoc',
    {
      bodyLimit: deps.appdocBodyLimit ?? DEFAULT_APPDOC_BODY_LIMIT,
      // Row 86: open to anyone, so limited per address in a family of its own (the
      // `appdoc` family of `rate-limit.ts`, `APPDOC_RATE_LIMIT_PER_MINUTE`).
      onSend: noStore,
      schema: {
        summary: 'Propose an app document',
        description:
          'Lands a pending proposal that lives ten minutes and is deleted a retention period (`PROPOSAL_RETENTION`, a day) after it ends. Every refusal names the field and reason. Two posts of one document are two requests. Open to anyone, so the body is at most `APPDOC_BODY_LIMIT` (256 KiB by default; 413 above it) and each address may post `APPDOC_RATE_LIMIT_PER_MINUTE` (10) a minute.',
        tags: ['vendor'],
        security: [],
        body: VendorDocument,
        response: {
          201: ProposalAnswer,
          ...problemResponses(...BODY_PROBLEMS),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await flow.propose(request.body, null)),
  );

  routes.get(
    '/appdoc',
    {
      schema: {
        summary: 'The composed document the install runs under',
        tags: ['vendor'],
        security: [{ installKey: [] }],
        response: { 200: ComposedDocument, ...problemResponses(401, 404) },
      },
    },
    async (request) => composedDocument(await installCaller(request, deps.controlStore)),
  );

  routes.post(
    '/installs/:id/proposals',
    {
      onSend: noStore,
      schema: {
        summary: 'Propose an update of the install',
        description:
          "The install key must name the install. Consent replaces the vendor document and the tenant's consent; the install and its key are kept.",
        tags: ['vendor'],
        security: [{ installKey: [] }],
        params: IdParams,
        body: VendorDocument,
        response: {
          201: ProposalAnswer,
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const install = await installCaller(request, deps.controlStore);
      requireInstallId(install, request.params.id);
      return reply.code(201).send(await flow.propose(request.body, install));
    },
  );
}
