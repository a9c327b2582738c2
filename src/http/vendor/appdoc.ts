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

export interface AppdocDeps {
  readonly controlStore: ControlStore;
  /** Decisions row 86: proposals per minute per IP. */
  readonly appdocRateLimitPerMinute: number;
}

/** Registers `POST /appdoc`, `GET /appdoc` and `POST /installs/{id}/proposals`. */
export function appdocRoutes(app: FastifyInstance, deps: AppdocDeps, flow: ProposalFlow): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/appdoc',
    {
      // Row 86: open to anyone, so limited per address rather than per credential.
      config: {
        rateLimit: {
          max: deps.appdocRateLimitPerMinute,
          windowMs: 60_000,
          key: (request) => `appdoc:${request.ip}`,
        },
      },
      schema: {
        summary: 'Propose an app document',
        description:
          'Lands a pending proposal that lives ten minutes. Every refusal names the field and reason (decisions row 20). Two posts of one document are two requests.',
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
      schema: {
        summary: 'Propose an update of the install',
        description:
          "The install key must name the install. Consent replaces the vendor document and the tenant's consent; the install and its key are kept (decisions row 94).",
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
