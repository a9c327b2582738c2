/**
 * The interactive API reference at `GET /docs`: Scalar's standalone
 * bundle, served from this origin with a page of our own, so that the page loads nothing
 * from elsewhere and runs under a Content-Security-Policy.
 *
 * Scalar's Fastify plugin renders a page that loads fonts from its CDN, reports
 * telemetry, and shows buttons that open Scalar's cloud (the API client, the agent, MCP
 * generation); its page carries no policy. The plugin is still where the bundle comes
 * from: it is registered once on a private Fastify instance that never listens, and its
 * script is taken from there. Our page turns every outside feature off in the
 * configuration, and the policy makes sure: scripts from this origin or with the page's
 * nonce, requests to this origin only, no fonts or frames from anywhere else.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Entropy } from '../clock.ts';

/** What the reference page is told: the document, and every outside feature off. */
const CONFIGURATION = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  documentDownloadType: 'json',
  // The footer's "Powered by Scalar" is the one link off this origin left.
  customCss: 'a[href^="https://www.scalar.com"] { display: none; }',
} as const;

let bundle: Promise<Buffer> | undefined;

/**
 * Scalar's standalone script, as its plugin serves it, kept as bytes. Read on the first
 * request for it and kept for the process: the plugin and its 4 MB script are loaded
 * only by a process whose reference page is opened, so an idle service stays small.
 */
function scalarBundle(): Promise<Buffer> {
  bundle ??= (async () => {
    const { default: apiReference } = await import('@scalar/fastify-api-reference');
    const source = Fastify({ logger: false });
    try {
      await source.register(apiReference, {
        routePrefix: '/reference',
        configuration: { url: CONFIGURATION.url },
      });
      const response = await source.inject({ method: 'GET', url: '/reference/js/scalar.js' });
      if (response.statusCode !== 200) throw new Error('the Scalar bundle could not be read');
      return response.rawPayload;
    } finally {
      await source.close();
    }
  })();
  bundle.catch(() => {
    bundle = undefined;
  });
  return bundle;
}

/**
 * The page's policy: scripts and requests of this origin only, and the page's own inline
 * script by its nonce. `eval` stays refused: the bundled zod probes for it once and does
 * without. Styles may be inline: Scalar sets styles from script at run time (theme, layout),
 * and a style cannot fetch anything the other directives allow.
 */
function policy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'unsafe-inline'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function page(nonce: string): string {
  const configuration = JSON.stringify(CONFIGURATION).replaceAll('<', '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <meta property="csp-nonce" content="${nonce}" />
    <link rel="icon" href="data:," />
    <title>Agent Session Service API</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="./js/scalar.js" nonce="${nonce}"></script>
    <script nonce="${nonce}">
      Scalar.createApiReference('#app', ${configuration});
    </script>
  </body>
</html>
`;
}

/** Registers `GET /docs`, `GET /docs/` and `GET /docs/js/scalar.js`. */
export function docsRoutes(app: FastifyInstance, entropy: Entropy): void {
  const hidden = { schema: { hide: true } };
  app.get('/docs', hidden, (_request, reply) => reply.redirect('/docs/', 301));
  app.get('/docs/', hidden, (_request, reply) => {
    const nonce = entropy.bytes(16).toString('base64');
    return reply
      .headers({
        'content-security-policy': policy(nonce),
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
      })
      .type('text/html; charset=utf-8')
      .send(page(nonce));
  });
  app.get('/docs/js/scalar.js', hidden, async (_request, reply) =>
    reply
      .headers({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' })
      .type('application/javascript; charset=utf-8')
      .send(await scalarBundle()),
  );
}
