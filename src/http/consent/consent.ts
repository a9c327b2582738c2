/**
 * The owner's side of a proposal (interface 4.3, 4.4, table 3.2, §5 rules 4 and 5, §7;
 * decisions rows 72, 83, 92 to 94): `GET /consent/{request}` reads it (members) and, asked
 * for HTML by a browser, is the consent page itself (`consent_url`); `POST
 * /consent/{request}` consents and `POST /consent/{request}/decline` declines (owners).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TokenService } from '../../auth/tokens.ts';
import type { Entropy } from '../../clock.ts';
import type { ProposalFlow } from '../../consent/proposals.ts';
import type { OidcVerifier } from '../../console/oidc.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import { AlreadyGrantedProblem, Problem } from '../../schemas/problem.ts';
import { ConsentAnswer, TenantConfig } from '../../schemas/tenant.ts';
import { ConsentRead, DeclineAnswer, RequestParams } from '../../schemas/vendor.ts';
import { consoleCaller, requireMember, requireOwner } from '../../console/caller.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import { clientAssetRoutes } from '../client-assets.ts';
import { PROBLEM_MEDIA_TYPE } from '../problem.ts';
import { oauthScriptRoute, pageSignIn } from '../signin/page-signin.ts';
import { CLIENT_FOLDER, sendPage, wantsPage } from './page.ts';

export interface ConsentDeps {
  readonly controlStore: ControlStore;
  readonly tokens: TokenService;
  readonly entropy: Entropy;
  /** `CONSOLE_OIDC_ISSUER`'s verifier: the page signs owners in there; undefined without. */
  readonly oidc: OidcVerifier | undefined;
  /** `OPERATOR_GRANT`; absent, on only without an issuer (as `POST /console/token`). */
  readonly operatorGrant?: boolean;
}

/** Registers `GET /consent/{request}` (JSON or the page), its consent and its decline. */
export function consentRoutes(app: FastifyInstance, deps: ConsentDeps, flow: ProposalFlow): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  // The identity provider's way back (OpenID Connect redirect URI): the same page, which
  // finishes the sign-in and returns to the request it was started from.
  routes.get(
    '/consent/signed-in',
    {
      schema: {
        summary: 'The consent page, back from the identity provider',
        description:
          'The redirect URI of the consent page’s OpenID Connect sign-in (register `<BASE_URL>/consent/signed-in` with the provider): the page takes `code` and `state`, gets the ID token, exchanges it at `POST /console/token` and returns to the request it was opened for.',
        tags: ['console'],
        response: {
          200: {
            description: 'The consent page.',
            content: { 'text/html': { schema: z.string().describe('The consent page.') } },
          },
        },
      },
    },
    async (_request, reply) => sendPage(reply, deps.entropy, await pageSignIn(deps)),
  );
  // The OpenID Connect client of the page, from the installed package: nothing from a CDN.
  oauthScriptRoute(app, '/consent/oauth4webapi.js', 'consent page');
  // The typed client the page calls the API through, from this origin.
  clientAssetRoutes(app, `/consent/${CLIENT_FOLDER}`);

  routes.get(
    '/consent/:request',
    {
      schema: {
        summary: 'Read a proposal, or open the consent page',
        description:
          'With `Accept: application/json` (or none), a member of the tenant reads the proposal. A browser asking for `text/html` gets the consent page: the owner signs in there (OpenID Connect with `CONSOLE_OIDC_ISSUER`, else the operator token), sees which user consents for which tenant, and consents or declines through this API.',
        tags: ['console'],
        security: [{ consoleToken: [] }, {}],
        params: RequestParams,
        response: {
          200: {
            description: 'The proposal as JSON, or the consent page as HTML.',
            content: {
              'application/json': { schema: ConsentRead },
              'text/html': { schema: z.string().describe('The consent page.') },
            },
          },
          ...problemResponses(401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      if (wantsPage(request)) return sendPage(reply, deps.entropy, await pageSignIn(deps));
      const caller = requireMember(await consoleCaller(request, deps));
      // One URL, two representations: caches must key on Accept.
      return reply
        .header('vary', 'Accept')
        .send(await flow.read(caller.tenant, request.params.request));
    },
  );

  routes.post(
    '/consent/:request',
    {
      schema: {
        summary: 'Consent to a proposal',
        description:
          "An owner lands the tenant config: it must fit the vendor's document and resolve under the tenant, every refusal naming the field. Consent creates the install and its key, or keeps an update's install and key.",
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: RequestParams,
        body: TenantConfig,
        response: {
          200: ConsentAnswer,
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 404),
          409: {
            description:
              'Conflict. The request was granted already (`already_granted`, `install` names it), or an owner declined it (`request_declined`).',
            content: {
              [PROBLEM_MEDIA_TYPE]: { schema: z.union([AlreadyGrantedProblem, Problem]) },
            },
          },
        },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      return flow.consent(caller.tenant, request.params.request, request.body);
    },
  );

  routes.post(
    '/consent/:request/decline',
    {
      schema: {
        summary: 'Decline a proposal',
        description:
          "An owner turns the proposal down: nothing is installed, and the vendor's poll answers `access_denied` (RFC 8628 §3.5) from then on, so the vendor stops polling. Declining again answers the same; a consent after it answers 409 `request_declined`. Send no body.",
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: RequestParams,
        response: {
          200: DeclineAnswer,
          ...problemResponses(401, 403, 404),
          409: {
            description:
              'Conflict. The request was granted already (`already_granted`, `install` names it).',
            content: {
              [PROBLEM_MEDIA_TYPE]: { schema: z.union([AlreadyGrantedProblem, Problem]) },
            },
          },
        },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      return flow.decline(caller.tenant, request.params.request);
    },
  );
}
