/**
 * The console at `GET /console`: the page a tenant owner keeps
 * open, served by the service itself with nothing from elsewhere and no build step. Its
 * scripts call the JSON API and the WebSocket tail as any dashboard would, all through
 * `api.js`, which calls through the typed client package served from this origin under
 * `/console/client/` (`../client-assets.ts`; the page's import map names its `openapi-fetch`).
 *
 * Sign-in is the consent page's, shared (`../signin/page-signin.ts`): OpenID Connect with
 * `CONSOLE_OIDC_ISSUER` (this page is its own redirect URI: register `<BASE_URL>/console`),
 * else the operator token pasted once. The page is sent under a fresh nonce and the same
 * Content-Security-Policy as the consent page; tokens never travel in a URL.
 *
 * The session, turn and claim charts and the statecharts view are what `npm run
 * statecharts` generates from the machines (`docs/statecharts`), served as it is
 * (`./statecharts.ts`).
 *
 * The pages of the tenant's resources (installs, connections, inference options and
 * secrets, members, usage) are `resources.js` and one script each, behind the page's nav.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Entropy } from '../../clock.ts';
import type { OidcVerifier } from '../../console/oidc.ts';
import { clientAssetRoutes, clientImportMap } from '../client-assets.ts';
import {
  oauthScriptRoute,
  sendSignInPage,
  pageSignIn,
  signInConfig,
  SIGN_IN_SCRIPT,
  type PageSignIn,
} from '../signin/page-signin.ts';
import { statechartRoutes } from './statecharts.ts';

const asset = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');

/** The page's scripts, in the order they run: `<!--SCRIPTS-->` in console.html. */
const SCRIPTS: readonly string[] = [
  SIGN_IN_SCRIPT,
  ...[
    'api.js',
    'records.js',
    'chart.js',
    'phases.js',
    'claims.js',
    'log-view.js',
    'audit.js',
    'session.js',
    'statecharts.js',
    'resources.js',
    'installs.js',
    'connections.js',
    'settings.js',
    'members.js',
    'usage.js',
    'console.js',
  ].map(asset),
];
const STYLE = asset('console.css');
const TEMPLATE = asset('console.html');

/** Where the typed client is served, relative to `/console`. */
const CLIENT = 'console/client';

/** Relative to `/console`: the exchange, oauth4webapi, the page itself, the typed client. */
const PATHS = {
  token: 'console/token',
  oauth: 'console/oauth4webapi.js',
  redirect: 'console',
  client: `${CLIENT}/index.ts`,
};

export interface ConsolePageDeps {
  readonly entropy: Entropy;
  /** `CONSOLE_OIDC_ISSUER`'s verifier: the page signs users in there; undefined without. */
  readonly oidc: OidcVerifier | undefined;
  /** `OPERATOR_GRANT`; absent, on only without an issuer. */
  readonly operatorGrant?: boolean | undefined;
}

function sendConsole(reply: FastifyReply, entropy: Entropy, signIn: PageSignIn): FastifyReply {
  const config = signInConfig(signIn, PATHS);
  // Function replacements: `$` sequences in the assets stay as they are.
  return sendSignInPage(reply, entropy, signIn, (nonce) =>
    TEMPLATE.replaceAll('{{nonce}}', nonce)
      .replace('/*CONFIG*/', () => config)
      .replace('/*IMPORTMAP*/', () => clientImportMap(`./${CLIENT}`))
      .replace('/*STYLE*/', () => STYLE)
      .replace('<!--SCRIPTS-->', () =>
        SCRIPTS.map((text) => `<script nonce="${nonce}">\n${text}\n</script>`).join('\n'),
      ),
  );
}

const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: z.string().describe('The console page.') } },
});

/** Registers the console page, its OpenID Connect client, the typed client and the generated charts. */
export function consolePageRoutes(app: FastifyInstance, deps: ConsolePageDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/console',
    {
      schema: {
        summary: 'The console',
        description:
          'The page a tenant user keeps open: sign-in (OpenID Connect with `CONSOLE_OIDC_ISSUER`, whose redirect URI is this address, else the operator token), the tenant chosen from `GET /console/memberships`, the session directory, a session’s live log, its session and turn charts and its tool calls’ claims over the WebSocket tail, with an ended session’s opened audit for owners, the tenant’s installs, connections, inference options and secrets, members and usage, and every machine’s generated chart and state table (`#/statecharts`). Served from this origin alone; everything it shows comes from this API.',
        tags: ['console'],
        response: { 200: html('The console page.') },
      },
    },
    async (_request, reply) => sendConsole(reply, deps.entropy, await pageSignIn(deps)),
  );

  oauthScriptRoute(app, '/console/oauth4webapi.js', 'console');
  clientAssetRoutes(app, `/${CLIENT}`);

  statechartRoutes(app);
}
