/**
 * The consent page: `consent_url` opened in a browser
 * serves a plain HTML page, no build step and nothing from elsewhere, whose script calls
 * the JSON API with the owner's console token (`GET /consent/{request}`, `GET
 * /inferences`, `GET /connections`, `POST /consent/{request}` and its `/decline`) through
 * the typed client package, served from this origin under `/consent/client/`
 * (`../client-assets.ts`; the page's import map names its `openapi-fetch`).
 *
 * The owner signs in on the page: through OpenID Connect when `CONSOLE_OIDC_ISSUER` is set
 * (authorization code with PKCE by oauth4webapi, then the ID token exchanged at `POST
 * /console/token`), or with the operator token where the operator grant is on (the
 * embedded default). The identity provider sends the browser back to `/consent/signed-in`,
 * the same page, which finishes the exchange and returns to the request.
 *
 * The page, its style and its scripts (the form, then the page logic) are files beside
 * this module, read once; the sign-in script and oauth4webapi, served from its package as
 * one ES module (`/consent/oauth4webapi.js`) that the sign-in imports when it is used, are
 * shared with the console (`../signin/page-signin.ts`). They are served under a fresh nonce with a Content-Security-Policy that allows nothing else:
 * no other script or style, requests only to this origin and the identity provider's, no
 * framing, no forms posted anywhere. The console token never reaches the server in a URL:
 * the page takes it from its fragment (`#token=…`), which browsers do not send, or mints
 * it through `POST /console/token`.
 */
import { readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Entropy } from '../../clock.ts';
import {
  sendSignInPage,
  signInConfig,
  SIGN_IN_SCRIPT,
  type PageSignIn,
} from '../signin/page-signin.ts';
import { clientImportMap } from '../client-assets.ts';

const asset = (name: string) => readFileSync(new URL(`./page/${name}`, import.meta.url), 'utf8');

const TEMPLATE = asset('consent.html');
const STYLE = asset('consent.css');
const FORM = asset('form.js');
const SCRIPT = asset('consent.js');

/**
 * Where the typed client the page's scripts call the API through is served, under
 * `/consent/`: the page imports `./client/index.ts` when it first calls.
 */
export const CLIENT_FOLDER = 'client';

/** Relative to `/consent/…`: the exchange, oauth4webapi, `/consent/signed-in`, the typed client. */
const PATHS = {
  token: '../console/token',
  oauth: './oauth4webapi.js',
  redirect: 'signed-in',
  client: `./${CLIENT_FOLDER}/index.ts`,
};

/** The quality a client's `Accept` header gives `type` (`*` ranges count), 0 when absent. */
function quality(accept: string, type: string): { q: number; exact: boolean } {
  const [major] = type.split('/');
  let best = { q: 0, exact: false, rank: -1 };
  for (const range of accept.split(',')) {
    const [name = '', ...params] = range.trim().toLowerCase().split(';');
    const rank = name === type ? 2 : name === `${major ?? ''}/*` ? 1 : name === '*/*' ? 0 : -1;
    if (rank < 0 || rank < best.rank) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    best = { q: q === undefined ? 1 : Number(q), exact: rank === 2, rank };
  }
  return { q: best.q, exact: best.exact };
}

/**
 * True when the client asks for the page: it names `text/html` itself and ranks it at
 * least as high as JSON. Browsers navigating do; API clients and `fetch` default to JSON.
 */
export function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (accept === undefined || accept === '') return false;
  const html = quality(accept, 'text/html');
  return html.exact && html.q > 0 && html.q >= quality(accept, 'application/json').q;
}

/** Sends the consent page, with what its sign-in offers, under its policy headers. */
export function sendPage(reply: FastifyReply, entropy: Entropy, signIn: PageSignIn): FastifyReply {
  // Read by the page as data (never run).
  const config = signInConfig(signIn, PATHS);
  // Function replacements: `$` sequences in the assets stay as they are.
  return sendSignInPage(reply, entropy, signIn, (nonce) =>
    TEMPLATE.replaceAll('{{nonce}}', nonce)
      .replace('/*CONFIG*/', () => config)
      .replace('/*IMPORTMAP*/', () => clientImportMap(`./${CLIENT_FOLDER}`))
      .replace('/*STYLE*/', () => STYLE)
      .replace('/*FORM*/', () => FORM)
      .replace('/*SIGNIN*/', () => SIGN_IN_SCRIPT)
      .replace('/*SCRIPT*/', () => SCRIPT),
  );
}
