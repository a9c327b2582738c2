/**
 * What the service's browser pages (the consent page and the console) share: how a user
 * signs in on them (`signin.js`, served inline to both), oauth4webapi as one ES module,
 * and the policy headers every page is sent under.
 *
 * Sign-in: through OpenID Connect when `CONSOLE_OIDC_ISSUER` is set (authorization code
 * with PKCE by oauth4webapi, then the ID token exchanged at `POST /console/token`), or with
 * the operator token where the operator grant is on (the embedded default). Each page
 * names, relative to itself, where its token exchange, its OpenID Connect client and its
 * redirect URI are.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Entropy } from '../../clock.ts';
import type { OidcVerifier } from '../../console/oidc.ts';

/** The sign-in script, served inline by every page that signs a user in. */
export const SIGN_IN_SCRIPT = readFileSync(new URL('./signin.js', import.meta.url), 'utf8');

/** How a page lets a user sign in; the page reads it from its own markup. */
export interface PageSignIn {
  /** `CONSOLE_OIDC_ISSUER` and the client the page signs in as; null without an issuer. */
  readonly oidc: {
    readonly issuer: string;
    readonly clientId: string;
    /** Origins the browser talks to while signing in (discovery and token endpoint). */
    readonly origins: readonly string[];
  } | null;
  /** Whether the operator token may be pasted (the operator grant is on). */
  readonly operatorGrant: boolean;
}

/** Where a page's sign-in calls, each relative to the page's own address. */
export interface SignInPaths {
  /** `POST /console/token`. */
  readonly token: string;
  /** oauth4webapi as served for this page. */
  readonly oauth: string;
  /** The redirect URI registered with the provider for this page. */
  readonly redirect: string;
}

/** What the service offers to sign in with. */
export async function pageSignIn(deps: {
  readonly oidc: OidcVerifier | undefined;
  /** `OPERATOR_GRANT`; absent, on only without an issuer (as `POST /console/token`). */
  readonly operatorGrant?: boolean | undefined;
}): Promise<PageSignIn> {
  const { oidc } = deps;
  return {
    oidc:
      oidc === undefined
        ? null
        : { issuer: oidc.issuer, clientId: oidc.audience, origins: await oidc.browserOrigins() },
    operatorGrant: deps.operatorGrant ?? oidc === undefined,
  };
}

/** The page's `page-config` data, escaped so it cannot close its element. */
export function signInConfig(signIn: PageSignIn, paths: SignInPaths): string {
  return JSON.stringify({
    oidc:
      signIn.oidc === null ? null : { issuer: signIn.oidc.issuer, clientId: signIn.oidc.clientId },
    operatorGrant: signIn.operatorGrant,
    paths,
  }).replaceAll('<', '\\u003c');
}

/**
 * The headers a page is sent under: nothing but its own nonce'd scripts and styles,
 * requests to this origin (CSP 3: `'self'` covers its WebSocket too) and the identity
 * provider's, no framing, no forms posted anywhere, no referrer.
 */
function pageHeaders(nonce: string, signIn: PageSignIn): Record<string, string> {
  const connect = ["'self'", ...(signIn.oidc?.origins ?? [])];
  return {
    'content-security-policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      `connect-src ${connect.join(' ')}`,
      "img-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    vary: 'Accept',
  };
}

/**
 * Sends a page that signs its user in: the HTML `render` writes around a fresh nonce for
 * its scripts and styles, under `pageHeaders`.
 */
export function sendSignInPage(
  reply: FastifyReply,
  entropy: Entropy,
  signIn: PageSignIn,
  render: (nonce: string) => string,
): FastifyReply {
  const nonce = entropy.bytes(16).toString('base64');
  return reply
    .code(200)
    .headers(pageHeaders(nonce, signIn))
    .type('text/html; charset=utf-8')
    .serializer((payload) => payload as string)
    .send(render(nonce));
}

let oauthModule: Promise<string> | undefined;

/**
 * oauth4webapi's browser build: one ES module that imports nothing, read from the installed
 * package on first use and kept (its source map comment dropped: the map is not served).
 */
function oauthScript(): Promise<string> {
  oauthModule ??= readFile(createRequire(import.meta.url).resolve('oauth4webapi'), 'utf8').then(
    (source) => source.replace(/^\/\/# sourceMappingURL=.*$/m, ''),
  );
  oauthModule.catch(() => {
    oauthModule = undefined;
  });
  return oauthModule;
}

/**
 * Registers `GET <url>`: oauth4webapi as one ES module, from this origin, for the sign-in
 * of the page `page` names (the consent page, the console).
 */
export function oauthScriptRoute(app: FastifyInstance, url: string, page: string): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    url,
    {
      schema: {
        summary: `The ${page}’s OpenID Connect client`,
        description: 'oauth4webapi as one ES module, served from the installed package.',
        tags: ['console'],
        response: {
          200: {
            description: 'JavaScript.',
            content: { 'text/javascript': { schema: z.string().describe('An ES module.') } },
          },
        },
      },
    },
    async (_request, reply) =>
      reply
        .headers({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' })
        .type('text/javascript; charset=utf-8')
        .send(await oauthScript()),
  );
}
