// The layers of docs/architecture.md as rules. `npm run deps:check` (part of `npm test`)
// fails on any of them; test/house/checks.test.ts shows each one can fail.
//
// From the bottom up:
//   base      src/errors.ts, src/clock.ts, src/logger.ts, src/schemas (one zod schema per
//             wire shape) and src/resources/types.ts (the registry of stored resources):
//             they import no other layer.
//   pure      src/machines, src/policy: no storage, HTTP, runtime, clock or randomness.
//   storage   src/storage: the ports and their backends; no HTTP and no domain service.
//   domain    src/actors, src/console, src/consent, src/connections, src/sessions, src/turns
//             and the rest: no HTTP.
//   http      src/http: the adapters; only the composition root imports them.
//   root      src/main.ts, src/config.ts (its environment), src/app.ts, src/services.ts.

const PURE = '^src/(machines|policy)/';
const BASE =
  '^src/(errors|error-codes|clock|logger)[.]ts$|^src/schemas/|^src/resources/types[.]ts$';
const DOMAIN =
  '^src/(actors|auth|connections|consent|console|gate|inference|mcp|metrics|net|resources|sessions|turns)/';
const HTTP = '^src/http/';
const ROOT = '^src/(app|services|main|config|config-values|ready-line)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'An import cycle: one of these modules should not know the other.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'pure-core',
      severity: 'error',
      comment:
        'Machines and policies are pure: they import machines, policies, schemas and errors only.',
      from: { path: PURE },
      to: { path: '^src/', pathNot: `${PURE}|^src/schemas/|^src/errors[.]ts$` },
    },
    {
      name: 'pure-no-io',
      severity: 'error',
      comment:
        'Machines and policies do no I/O: no file, network, process or timer modules, no store or HTTP client.',
      from: { path: PURE },
      to: {
        path: '^(node:)?(fs|fs/promises|net|http|https|http2|child_process|dns|os|timers|timers/promises|worker_threads|dgram|cluster|process)$|(^|/)node_modules/(pg|ioredis|fastify|@fastify/[^/]+|undici|ws|pino|@modelcontextprotocol/sdk)/',
      },
    },
    {
      name: 'src-imports-no-tooling',
      severity: 'error',
      comment: 'The service does not import its tests, benches, scripts or examples.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts|examples)/' },
    },
    {
      name: 'base-imports-no-layer',
      severity: 'error',
      comment: 'Errors, the clock, the logger and the wire schemas sit under every layer.',
      from: { path: BASE },
      to: { path: '^src/', pathNot: BASE },
    },
    {
      name: 'storage-below-domain',
      severity: 'error',
      comment: 'Storage backs the domain; it imports no domain service, runtime, machine or HTTP.',
      from: { path: '^src/storage/' },
      to: { path: `${DOMAIN}|${HTTP}|${ROOT}|${PURE}`, pathNot: BASE },
    },
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: 'Domain services and the runtime do not know HTTP or the composition root.',
      from: { path: `${DOMAIN}|${PURE}|^src/storage/` },
      to: { path: `${HTTP}|${ROOT}` },
    },
    {
      name: 'http-only-from-root',
      severity: 'error',
      comment: 'Only the composition root (and src/http itself) imports src/http.',
      from: { path: '^src/', pathNot: `${HTTP}|${ROOT}` },
      to: { path: HTTP },
    },
    {
      name: 'root-only-from-main',
      severity: 'error',
      comment: 'The composition root is entered from src/main.ts (tests may build it too).',
      from: { path: '^src/', pathNot: ROOT },
      to: { path: ROOT },
    },
    {
      name: 'src-no-dev-dependency',
      severity: 'error',
      comment: 'A production install has no devDependencies: src/ must not need one.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'resolvable',
      severity: 'error',
      comment:
        'An import that resolves to nothing (the consent page imports what its server serves).',
      from: { pathNot: '^src/http/consent/page/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data|coverage|[.]tmp)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
