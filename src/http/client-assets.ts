/**
 * The typed client (`packages/client`) served to this service's own pages, so a
 * page calls the API through the same package vendors use, from this origin, with no
 * bundler and nothing from a CDN. The package is TypeScript of erasable syntax only: each
 * module is served as JavaScript with its types stripped (types become whitespace, so
 * lines and columns stay those of the source), under its own name, so the package's
 * `./x.ts` imports resolve among the served files. Its one bare import, `openapi-fetch`,
 * is served beside it from the installed package (an ES module that imports nothing); a
 * page maps it with the import map `clientImportMap` writes.
 *
 * The modules are stripped once, on the first request for one, by a child process
 * (`client-stripper.ts`): the stripper holds some 18 MB for the life of the process that
 * loads it, which the service, started with its compile cache warm, otherwise never does
 * (`src/compile-cache.js`). The routes are made at start from the package's file list.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFound } from '../errors.ts';
import { problemResponses } from './openapi-responses.ts';

/** The package's folder: beside `src/` in this repository, as in every install of it. */
const PACKAGE = new URL('../../packages/client/', import.meta.url);
const SOURCE = new URL('src/', PACKAGE);
const STRIPPER = fileURLToPath(new URL('client-stripper.ts', import.meta.url));

/** The file `openapi-fetch` is served as, under the prefix. */
const OPENAPI_FETCH = 'openapi-fetch.js';

/** The whole package is about 1 MB of text: room to spare, and a bound. */
const STRIPPED_BYTES = 64 * 1024 * 1024;
const STRIP_TIMEOUT_MS = 30_000;

const run = promisify(execFile);

let files: readonly string[] | undefined;

/** The package's modules by their path under `src/` (`client.ts`, `executor/run.ts`). */
function clientFiles(): readonly string[] {
  files ??= readdirSync(SOURCE, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split('\\').join('/'))
    .sort();
  return files;
}

let scripts: Promise<ReadonlyMap<string, string>> | undefined;

/**
 * Every module as JavaScript, and `openapi-fetch.js`: made on first use, then kept. A
 * failure is kept too: these routes are not rate limited, and a retry per request would
 * start a process per request.
 */
function clientScripts(): Promise<ReadonlyMap<string, string>> {
  scripts ??= strippedModules();
  return scripts;
}

async function strippedModules(): Promise<ReadonlyMap<string, string>> {
  const paths = clientFiles();
  // Its own environment: nothing preloaded into the service (NODE_OPTIONS) reaches it.
  const { stdout } = await run(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      STRIPPER,
      ...paths.map((path) => fileURLToPath(new URL(path, SOURCE))),
    ],
    { env: {}, maxBuffer: STRIPPED_BYTES, timeout: STRIP_TIMEOUT_MS },
  );
  const texts = JSON.parse(stdout) as string[];
  if (texts.length !== paths.length) {
    throw new Error(`the client stripper answered ${texts.length} modules of ${paths.length}`);
  }
  const found = new Map(paths.map((path, i) => [path, texts[i] ?? '']));
  // The package's dependency, resolved from the package (a production install keeps it).
  const fromPackage = createRequire(new URL('package.json', PACKAGE));
  const fetchModule = fromPackage.resolve('openapi-fetch/dist/index.mjs');
  // Its source map is not served: drop the comment that names it.
  const fetchSource = readFileSync(fetchModule, 'utf8');
  found.set(OPENAPI_FETCH, fetchSource.replace(/^\/\/# sourceMappingURL=.*$/m, ''));
  return found;
}

/**
 * Registers `GET <prefix>/{module}` and, for each folder of the package,
 * `GET <prefix>/<folder>/{module}` (e.g. `<prefix>/index.ts`, `<prefix>/executor/run.ts`,
 * `<prefix>/openapi-fetch.js`), each module served as JavaScript and documented as such.
 * A page imports `<prefix>/index.ts` after the import map of `clientImportMap`.
 */
export function clientAssetRoutes(app: FastifyInstance, prefix: string): void {
  const folders = new Set(
    [...clientFiles(), OPENAPI_FETCH].map((path) => path.replace(/[^/]*$/, '')),
  );
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
      async (request, reply) => {
        const script = (await clientScripts()).get(`${folder}${request.params.module}`);
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
