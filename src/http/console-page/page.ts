/**
 * The console at `GET /console`: the page a tenant owner keeps
 * open, served by the service itself with nothing from elsewhere and no build step. Its
 * scripts call the JSON API and the WebSocket tail as any dashboard would, all through
 * `api.js` (to be switched for the typed client package once browsers can load it).
 *
 * Sign-in is the consent page's, shared (`../signin/page-signin.ts`): OpenID Connect with
 * `CONSOLE_OIDC_ISSUER` (this page is its own redirect URI: register `<BASE_URL>/console`),
 * else the operator token pasted once. The page is sent under a fresh nonce and the same
 * Content-Security-Policy as the consent page; tokens never travel in a URL.
 *
 * The pages of the tenant's resources (installs, connections, inference options and
 * secrets, members, usage) are `resources.js` and one script each, behind the page's nav.
 *
 * The turn chart is the SVG `npm run statecharts` generates from the machine
 * (`docs/statecharts/<machine>.svg`, held to the machines by `npm run statecharts:check`),
 * served as it is at `GET /console/statecharts/{machine}`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Entropy } from '../../clock.ts';
import type { OidcVerifier } from '../../console/oidc.ts';
import { problemResponses } from '../openapi-responses.ts';
import {
  oauthScriptRoute,
  pageHeaders,
  pageSignIn,
  signInConfig,
  SIGN_IN_SCRIPT,
  type PageSignIn,
} from '../signin/page-signin.ts';

const asset = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');

/** Placeholder in console.html → the asset inlined there. */
const ASSETS: readonly (readonly [string, string])[] = [
  ['/*STYLE*/', asset('console.css')],
  ['/*SIGNIN*/', SIGN_IN_SCRIPT],
  ['/*API*/', asset('api.js')],
  ['/*RECORDS*/', asset('records.js')],
  ['/*CHART*/', asset('chart.js')],
  ['/*SESSION*/', asset('session.js')],
  ['/*RESOURCES*/', asset('resources.js')],
  ['/*INSTALLS*/', asset('installs.js')],
  ['/*CONNECTIONS*/', asset('connections.js')],
  ['/*SETTINGS*/', asset('settings.js')],
  ['/*MEMBERS*/', asset('members.js')],
  ['/*USAGE*/', asset('usage.js')],
  ['/*SCRIPT*/', asset('console.js')],
];
const TEMPLATE = asset('console.html');

/** Relative to `/console`: the exchange, the served client, and the page itself. */
const PATHS = { token: 'console/token', oauth: 'console/oauth4webapi.js', redirect: 'console' };

/** The generated charts, by machine name: `docs/statecharts/<name>.svg`. */
const CHARTS_DIR = new URL('../../../docs/statecharts/', import.meta.url);
const CHARTS: ReadonlyMap<string, string> = new Map(
  readdirSync(CHARTS_DIR)
    .filter((file) => file.endsWith('.svg'))
    .sort()
    .map((file) => [
      file.slice(0, -'.svg'.length),
      readFileSync(new URL(file, CHARTS_DIR), 'utf8'),
    ]),
);

export interface ConsolePageDeps {
  readonly entropy: Entropy;
  /** `CONSOLE_OIDC_ISSUER`'s verifier: the page signs users in there; undefined without. */
  readonly oidc: OidcVerifier | undefined;
  /** `OPERATOR_GRANT`; absent, on only without an issuer. */
  readonly operatorGrant?: boolean | undefined;
}

function sendConsole(reply: FastifyReply, entropy: Entropy, signIn: PageSignIn): FastifyReply {
  const nonce = entropy.bytes(16).toString('base64');
  const config = signInConfig(signIn, PATHS);
  // Function replacements: `$` sequences in the assets stay as they are.
  let html = TEMPLATE.replaceAll('{{nonce}}', nonce).replace('/*CONFIG*/', () => config);
  for (const [mark, text] of ASSETS) html = html.replace(mark, () => text);
  return reply
    .code(200)
    .headers(pageHeaders(nonce, signIn))
    .type('text/html; charset=utf-8')
    .serializer((payload) => payload as string)
    .send(html);
}

const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: z.string().describe('The console page.') } },
});

/** Registers the console page, its OpenID Connect client and the generated charts. */
export function consolePageRoutes(app: FastifyInstance, deps: ConsolePageDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/console',
    {
      schema: {
        summary: 'The console',
        description:
          'The page a tenant user keeps open: sign-in (OpenID Connect with `CONSOLE_OIDC_ISSUER`, whose redirect URI is this address, else the operator token), the tenant chosen from `GET /console/memberships`, the session directory, a session’s live log and turn chart over the WebSocket tail, and the tenant’s installs, connections, inference options and secrets, members and usage. Served from this origin alone; everything it shows comes from this API.',
        tags: ['console'],
        response: { 200: html('The console page.') },
      },
    },
    async (_request, reply) => sendConsole(reply, deps.entropy, await pageSignIn(deps)),
  );

  oauthScriptRoute(app, '/console/oauth4webapi.js', 'console');

  const names = [...CHARTS.keys()];
  routes.get(
    '/console/statecharts/:machine',
    {
      schema: {
        summary: 'A machine’s generated statechart',
        description: `The SVG \`npm run statecharts\` generates from the machine in \`src/machines\` (as \`docs/statecharts/<machine>.svg\`); each state is a group \`g[data-state=<path>]\`. Machines: ${names.map((n) => `\`${n}\``).join(', ')}.`,
        tags: ['console'],
        params: z.object({
          machine: z.enum(names as [string, ...string[]]).describe('The machine’s name.'),
        }),
        response: {
          200: {
            description: 'The chart.',
            content: { 'image/svg+xml': { schema: z.string().describe('An SVG document.') } },
          },
          ...problemResponses(400),
        },
      },
    },
    async (request, reply) =>
      reply
        .headers({
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
        })
        .type('image/svg+xml; charset=utf-8')
        .serializer((payload) => payload as string)
        .send(CHARTS.get(request.params.machine) ?? ''),
  );
}
