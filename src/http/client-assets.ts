/**
 * The typed client (`packages/client`) served to this service's own pages, so a
 * page calls the API through the same package vendors use, from this origin, with no
 * bundler and nothing from a CDN. The package is TypeScript of erasable syntax only: each
 * module is read once and served as JavaScript after `stripTypeScriptTypes` (types become
 * whitespace, so lines and columns stay those of the source), under its own name, so the
 * package's `./x.ts` imports resolve among the served files. Its one bare import,
 * `openapi-fetch`, is served beside it from the installed package (an ES module that
 * imports nothing); a page maps it with the import map `clientImportMap` writes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire, stripTypeScriptTypes } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFound } from '../errors.ts';
import { problemResponses } from './openapi-responses.ts';

/** The package's folder: beside `src/` in this repository, as in every install of it. */
const PACKAGE = new URL('../../packages/client/', import.meta.url);

/** The file `openapi-fetch` is served as, under the prefix. */
const OPENAPI_FETCH = 'openapi-fetch.js';

let modules: ReadonlyMap<string, string> | undefined;

/**
 * Every module of the package as JavaScript, by its path under `src/` (`client.ts`,
 * `executor/run.ts`), and `openapi-fetch.js`; read and stripped on first use, then kept.
 */
function clientModules(): ReadonlyMap<string, string> {
  if (modules !== undefined) return modules;
  const source = new URL('src/', PACKAGE);
  const found = new Map<string, string>();
  const files = readdirSync(source, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  );
  for (const file of files.sort()) {
    const path = file.split('\\').join('/');
    // Throws on syntax that is not erasable (an enum, a namespace): caught at start-up.
    found.set(path, stripTypeScriptTypes(readFileSync(new URL(path, source), 'utf8')));
  }
  // The package's dependency, resolved from the package (a production install keeps it).
  const fromPackage = createRequire(new URL('package.json', PACKAGE));
  const fetchModule = fromPackage.resolve('openapi-fetch/dist/index.mjs');
  // Its source map is not served: drop the comment that names it.
  const fetchSource = readFileSync(fetchModule, 'utf8');
  found.set(OPENAPI_FETCH, fetchSource.replace(/^\/\/# sourceMappingURL=.*$/m, ''));
  modules = found;
  return found;
}

/**
 * Registers `GET <prefix>/{module}` and, for each folder of the package,
 * `GET <prefix>/<folder>/{module}` (e.g. `<prefix>/index.ts`, `<prefix>/executor/run.ts`,
 * `<prefix>/openapi-fetch.js`), each module served as JavaScript and documented as such.
 * A page imports `<prefix>/index.ts` after the import map of `clientImportMap`.
 */
export function clientAssetRoutes(app: FastifyInstance, prefix: string): void {
  const served = clientModules();
  const folders = new Set([...served.keys()].map((path) => path.replace(/[^/]*$/, '')));
  for (const folder of folders) {
    app.withTypeProvider<ZodTypeProvider>().get(
      `${prefix}/${folder}:module`,
      {
        // Static text kept in memory, and a page imports a dozen of them at once: counting
        // them against the `open` family (20 a second) would refuse a page's second load.
        config: { rateLimit: false },
        schema: {
          summary: `The typed client for pages: ${folder === '' ? 'a module' : `a module of ${folder}`}`,
          description:
            'A module of the typed client package (`packages/client/src`) as JavaScript, its types stripped, or `openapi-fetch.js`, its one dependency: what the service’s own pages import to call this API, from this origin.',
          tags: ['service'],
          params: z.object({
            module: z.string().describe('The module’s file name, e.g. `index.ts`.'),
          }),
          response: {
            200: {
              description: 'JavaScript.',
              content: { 'text/javascript': { schema: z.string().describe('An ES module.') } },
            },
            ...problemResponses(404),
          },
        },
      },
      (request, reply) => {
        const script = served.get(`${folder}${request.params.module}`);
        if (script === undefined)
          throw new NotFound('not_found', `the client has no module ${request.params.module}`);
        void reply
          .headers({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
          .type('text/javascript; charset=utf-8');
        return script;
      },
    );
  }
}

/**
 * The import map (JSON for a `<script type="importmap">`) a page needs before it imports
 * the client: `openapi-fetch` mapped to its served copy. `base` is where the page sees
 * the prefix, absolute or relative to the page (`./client`); `<` is escaped so the JSON
 * cannot close its element.
 */
export function clientImportMap(base: string): string {
  const imports = { 'openapi-fetch': `${base}/${OPENAPI_FETCH}` };
  return JSON.stringify({ imports }).replaceAll('<', '\\u003c');
}
